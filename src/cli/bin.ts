// The node check runs before anything loads node:sqlite.
import './node-check';
import { main } from './main';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`hangar: error: ${(err as Error)?.message ?? err}\n`);
    process.exit(1);
  },
);
