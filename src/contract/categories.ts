import { sourceDocument } from './document-source';

/**
 * The two published EventCategory value sets, read from the contract
 * (`components.schemas.EventCategory.x-category-sets`) so they exist in one place.
 */
export const categorySetNames = ['A', 'B'] as const;
export type CategorySetName = (typeof categorySetNames)[number];

export function categorySet(name: CategorySetName): string[] {
  const sets = sourceDocument().components.schemas.EventCategory['x-category-sets'] as Record<string, string[]>;
  const values = sets[name];
  if (!values) throw new Error(`openapi/v1.yaml has no EventCategory set ${name}`);
  return values;
}
