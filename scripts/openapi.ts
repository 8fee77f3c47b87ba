// Writes docs/openapi/{registry,secrets,catalog}.json (the OpenAPI documents the three listeners
// serve, generated from the route tables) and docs/openapi/README.md (their operations as tables).
// Run `npm run openapi` after changing a route; a test fails while the committed files differ.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiSummary, openApiDocument } from '../src/engine/openapi';

const dir = join(__dirname, '..', 'docs', 'openapi');
for (const api of ['registry', 'secrets', 'catalog'] as const) {
  writeFileSync(join(dir, `${api}.json`), `${JSON.stringify(openApiDocument(api), null, 2)}\n`);
}
writeFileSync(join(dir, 'README.md'), openApiSummary());
console.log(`wrote ${dir}`);
