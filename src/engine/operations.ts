import { z } from 'zod';
import type { Engine } from './engine';
import type { ApiName } from './http/api';

/**
 * What the three APIs' operational endpoints share: metrics and OpenAPI answers. prom-client and the
 * OpenAPI generator load on the first such request, not with the route tables (the CLI's custom
 * resources build the apps in process and never serve these).
 */

/** The `format` query parameter of the metrics endpoints. */
export const MetricsFormat = z.enum(['prometheus', 'json', '']).optional();

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A metrics endpoint's answer (secrets `sys/metrics`, catalog `agent/metrics`, registry `/metrics`):
 * Prometheus text for `format=prometheus`, else the public services' JSON.
 */
export async function renderMetrics(engine: Engine, format: string | undefined): Promise<{ contentType: string; body: string }> {
  const metrics = engine.enableMetrics();
  if (format === 'prometheus') return metrics.prometheus();
  return { contentType: JSON_TYPE, body: JSON.stringify(await metrics.json(engine.clock.now())) };
}

/** An OpenAPI endpoint's answer: the API's generated document. */
export function renderOpenApi(api: ApiName): { contentType: string; body: string } {
  const { openApiDocument } = require('./openapi') as typeof import('./openapi');
  return { contentType: JSON_TYPE, body: JSON.stringify(openApiDocument(api)) };
}
