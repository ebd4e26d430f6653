import { Link } from 'wouter';
import { useTitle } from '../components/useTitle';

export function NotFound() {
  useTitle('Not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        This address is not a page of the console. <Link href="/">Go to the timeline</Link>.
      </p>
    </>
  );
}
