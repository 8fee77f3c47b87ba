import { z } from 'zod';
import { EMPTY_URLS, readCrlConfig, readUrls, rebuildCrl, UrlsConfig } from './store';
import { commaList, duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute } from '../../core/types';

const UrlsBody = z.object({
  issuing_certificates: commaList.optional(),
  crl_distribution_points: commaList.optional(),
  ocsp_servers: commaList.optional(),
  enable_templating: flexibleBoolean.optional(),
});
const CrlBody = z.object({
  expiry: duration(1).optional(),
  disable: flexibleBoolean.optional(),
  ocsp_disable: flexibleBoolean.optional(),
  ocsp_expiry: duration(0).optional(),
  auto_rebuild: flexibleBoolean.optional(),
  auto_rebuild_grace_period: duration(1).optional(),
  enable_delta: flexibleBoolean.optional(),
  delta_rebuild_interval: duration(1).optional(),
  cross_cluster_revocation: flexibleBoolean.optional(),
  unified_crl: flexibleBoolean.optional(),
  unified_crl_on_existing_paths: flexibleBoolean.optional(),
  max_crl_entries: flexibleInt.optional(),
});
const ClusterBody = z.object({ path: z.string().max(1024).optional(), aia_path: z.string().max(1024).optional() });

/** The CRL settings the public service stores and shows besides `expiry` and `disable` (stored, not acted on). */
const CRL_EXTRAS = {
  ocsp_disable: false,
  ocsp_expiry: 12 * 3600,
  auto_rebuild: false,
  auto_rebuild_grace_period: 12 * 3600,
  enable_delta: false,
  delta_rebuild_interval: 15 * 60,
  cross_cluster_revocation: false,
  unified_crl: false,
  unified_crl_on_existing_paths: false,
  max_crl_entries: 100000,
};
const CRL_DURATIONS = ['ocsp_expiry', 'auto_rebuild_grace_period', 'delta_rebuild_interval'] as const;

/** A duration as the public service shows `expiry` (`72h`, `90m`, `45s`). */
function goDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** `config/urls` (written into every certificate issued after) and `config/crl`. */
export const configRoutes: EngineRoute[] = [
  {
    pattern: 'config/urls',
    body: UrlsBody,
    read: async (req) => ({ data: { ...(await readUrls(req.store)) } }),
    write: async (req) => {
      const b = req.body as z.infer<typeof UrlsBody>;
      const given = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
      const next: UrlsConfig = { ...EMPTY_URLS, ...(await readUrls(req.store)), ...given };
      for (const field of ['issuing_certificates', 'crl_distribution_points', 'ocsp_servers'] as const) {
        for (const url of next[field]) if (!next.enable_templating && !URL.canParse(url)) throw badInput(`${field}: "${url}" is not a URL`);
      }
      await req.store.put('config/urls', next);
      return undefined;
    },
  },
  {
    pattern: 'config/crl',
    body: CrlBody,
    read: async (req) => {
      const c = { ...CRL_EXTRAS, ...(await readCrlConfig(req.store)) };
      const shown: Record<string, unknown> = { ...c, expiry: goDuration(c.expiry) };
      for (const d of CRL_DURATIONS) shown[d] = goDuration(c[d]);
      return { data: shown };
    },
    write: async (req) => {
      const b = req.body as z.infer<typeof CrlBody>;
      const current = { ...CRL_EXTRAS, ...(await readCrlConfig(req.store)) };
      const given = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
      if (b.max_crl_entries !== undefined && b.max_crl_entries < -1) throw badInput('max_crl_entries: must be -1 (unlimited) or more');
      await req.store.put('config/crl', { ...current, ...given });
      // A changed setting shows in the next CRL at once, as the public service rebuilds on write.
      await rebuildCrl(req.store, req.now);
      return undefined;
    },
  },
  {
    // The public service's cluster URLs (for AIA templating and ACME): stored and shown.
    pattern: 'config/cluster',
    body: ClusterBody,
    readOnly: ['read'],
    read: async (req) => ({ data: { path: '', aia_path: '', ...(await req.store.get<Record<string, string>>('config/cluster')) } }),
    write: async (req) => {
      const b = req.body as z.infer<typeof ClusterBody>;
      const current = { path: '', aia_path: '', ...(await req.store.get<Record<string, string>>('config/cluster')) };
      const next = { path: b.path ?? current.path, aia_path: b.aia_path ?? current.aia_path };
      for (const [field, url] of Object.entries(next)) if (url && !URL.canParse(url)) throw badInput(`${field}: "${url}" is not a URL`);
      await req.store.put('config/cluster', next);
      return { data: next };
    },
  },
];
