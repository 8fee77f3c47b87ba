import { z } from 'zod';
import { MetricsFormat, renderMetrics, renderOpenApi } from '../../operations';
import { EngineRoute } from '../core/types';

/**
 * `sys/metrics` (a token with read on sys/metrics, as the public service asks unless its listener
 * allows unauthenticated metrics) and `sys/internal/specs/openapi` (unauthenticated there too).
 */
export const observabilitySystemRoutes: EngineRoute[] = [
  {
    pattern: 'metrics',
    query: z.object({ format: MetricsFormat }),
    // The gauges read storage in their own transactions (one connection for SQLite: not nested).
    ownTransactions: ['read'],
    read: async (req) => ({ status: 200, raw: await renderMetrics(req.engine, (req.query as { format?: string }).format) }),
  },
  {
    pattern: 'internal/specs/openapi',
    unauthenticated: true,
    query: z.object({ generic_mount_paths: z.string().optional() }),
    readOnly: true,
    read: async () => ({ status: 200, raw: renderOpenApi('secrets') }),
  },
];
