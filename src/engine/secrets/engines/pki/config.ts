import { z } from 'zod';
import { EMPTY_URLS, readCrlConfig, readUrls, rebuildCrl } from './store';
import { commaList, duration, flexibleBoolean } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute } from '../../core/types';

const UrlsBody = z.object({
  issuing_certificates: commaList.optional(),
  crl_distribution_points: commaList.optional(),
  ocsp_servers: commaList.optional(),
});
const CrlBody = z.object({ expiry: duration(1).optional(), disable: flexibleBoolean.optional() });

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
    read: async (req) => ({ data: { ...(await readUrls(req.store)), enable_templating: false } }),
    write: async (req) => {
      const b = req.body as z.infer<typeof UrlsBody>;
      const next = { ...EMPTY_URLS, ...(await readUrls(req.store)), ...Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)) };
      for (const [field, urls] of Object.entries(next)) {
        for (const url of urls) if (!URL.canParse(url)) throw badInput(`${field}: "${url}" is not a URL`);
      }
      await req.store.put('config/urls', next);
      return undefined;
    },
  },
  {
    pattern: 'config/crl',
    body: CrlBody,
    read: async (req) => {
      const c = await readCrlConfig(req.store);
      return { data: { expiry: goDuration(c.expiry), disable: c.disable } };
    },
    write: async (req) => {
      const b = req.body as z.infer<typeof CrlBody>;
      const current = await readCrlConfig(req.store);
      await req.store.put('config/crl', { expiry: b.expiry ?? current.expiry, disable: b.disable ?? current.disable });
      // A changed setting shows in the next CRL at once, as the public service rebuilds on write.
      await rebuildCrl(req.store, req.now);
      return undefined;
    },
  },
];
