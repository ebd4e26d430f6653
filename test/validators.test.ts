import assert from 'node:assert/strict';
import { sourceDocument } from '../src/contract/document-source';
import { ContractValidators, serializedJson } from '../src/contract/validators';
import { event } from './support/events';

describe('Contract validators', () => {
  const validate = new ContractValidators(sourceDocument()).typed('IngestEvent');

  it('give the JSON text a metadata object was measured as, and any other value its own text', () => {
    const first = { ticket: 'OPS-1', points: 1e21, note: 'é\u2028' };
    const second = { ticket: 'OPS-2' };
    assert.ok('value' in validate(event({ metadata: first })));
    assert.ok('value' in validate(event({ metadata: second })));
    // The text measured last is reused; an earlier value (or one never measured) is serialized anew, never given another's text.
    assert.equal(serializedJson(second), '{"ticket":"OPS-2"}');
    assert.equal(serializedJson(first), '{"ticket":"OPS-1","points":1e+21,"note":"é\u2028"}');
    assert.equal(serializedJson({ never: 'measured' }), '{"never":"measured"}');
  });
});
