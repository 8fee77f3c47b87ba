import { constants, createHash, createHmac, randomBytes, sign, timingSafeEqual, verify } from 'node:crypto';
import { z } from 'zod';
import { b64, batched, fromB64, ITEM_ERRORS_OK, keyVersion } from './input';
import { canSign, hmacKeyOf, isRsa, Keyring, keyringOf, KeyVersion, parseVersioned, privateKeyOf, publicKeyOf, versioned, versionFor, versionOf } from './keyring';
import { checkDigest, signDigest, verifyDigest } from './prehash';
import { flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

/** Vault's hash names and node's. */
const HASHES: Record<string, string> = {
  'sha1': 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
};
const hashName = (field: string, name: string | undefined): string => {
  const h = HASHES[name ?? 'sha2-256'];
  if (!h) throw badInput(`${field}: unsupported hash algorithm "${name}" (use one of ${Object.keys(HASHES).join(', ')})`);
  return h;
};

// Items' base64 fields stay text until the item runs (`fromB64`): one that does not decode fails in its place.
const SignItem = z.object({ input: z.string().optional(), context: z.string().optional(), reference: z.string().optional() });
const SignOptions = {
  hash_algorithm: z.string().optional(),
  algorithm: z.string().optional(),
  signature_algorithm: z.enum(['pss', 'pkcs1v15'], { message: 'must be pss or pkcs1v15' }).optional(),
  marshaling_algorithm: z.enum(['asn1', 'jws'], { message: 'must be asn1 or jws' }).optional(),
  prehashed: flexibleBoolean.optional(),
  key_version: keyVersion.optional(),
};
const SignBody = SignItem.extend({ ...SignOptions, batch_input: z.array(SignItem).optional() });
const VerifyItem = SignItem.extend({ signature: z.string().optional(), hmac: z.string().optional() });
const VerifyBody = VerifyItem.extend({ ...SignOptions, batch_input: z.array(VerifyItem).optional() });
const HmacItem = z.object({ input: z.string().optional(), reference: z.string().optional() });
const HmacBody = HmacItem.extend({
  algorithm: z.string().optional(),
  key_version: keyVersion.optional(),
  batch_input: z.array(HmacItem).optional(),
});
const HashBody = z.object({
  input: b64,
  algorithm: z.string().optional(),
  format: z.enum(['hex', 'base64'], { message: 'must be hex or base64' }).optional(),
});

type SignOpts = z.infer<typeof SignBody>;

/** The hash of a request: the path's, else the body's `hash_algorithm` (or `algorithm`). */
const hashOf = (req: SecretsRequest<SignOpts>) => req.params.hash_algorithm ?? req.body.hash_algorithm ?? req.body.algorithm;

/** node's options for a key version and the request's signature settings. */
function signingKey(ring: Keyring, v: KeyVersion, o: SignOpts, hash: string | undefined, pub: boolean) {
  if (!canSign(ring.type)) throw badInput(`key type ${ring.type} does not support signing`);
  const key = pub ? publicKeyOf(v) : privateKeyOf(v);
  if (ring.type === 'ed25519') {
    if (o.prehashed) throw badInput('prehashed: ed25519 keys sign the message itself (Ed25519ph is not supported); send the input unhashed');
    return { algorithm: null, key: { key } };
  }
  if (o.prehashed && !isRsa(ring.type)) {
    throw badInput(`prehashed: ${ring.type} keys sign the message itself (node:crypto cannot sign a precomputed digest with an EC key); send the input unhashed, or use an RSA key`);
  }
  const algorithm = hashName('hash_algorithm', hash);
  if (isRsa(ring.type)) {
    const pss = (o.signature_algorithm ?? 'pss') === 'pss';
    const saltLength = pub ? constants.RSA_PSS_SALTLEN_AUTO : constants.RSA_PSS_SALTLEN_MAX_SIGN;
    return { algorithm, key: pss ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength } : { key, padding: constants.RSA_PKCS1_PADDING } };
  }
  return { algorithm, key: { key, dsaEncoding: o.marshaling_algorithm === 'jws' ? ('ieee-p1363' as const) : ('der' as const) } };
}

/** With `prehashed`, the input is the caller's digest, checked for the hash's size and signed as such. */
function prehashed(o: SignOpts, algorithm: string, hash: string | undefined) {
  const options = { hash: algorithm, pss: (o.signature_algorithm ?? 'pss') === 'pss' };
  return (digest: Buffer) => {
    checkDigest(algorithm, hash ?? 'sha2-256', digest);
    return options;
  };
}

/** The signing function of a key version for this request. */
function signerOf(ring: Keyring, v: KeyVersion, o: SignOpts, hash: string | undefined): (input: Buffer) => Buffer {
  const { algorithm, key } = signingKey(ring, v, o, hash, false);
  if (!o.prehashed || algorithm === null) return (input) => sign(algorithm, input, key);
  const options = prehashed(o, algorithm, hash);
  return (input) => signDigest(key.key, input, options(input));
}

/** The verifying function of a key version for this request. */
function verifierOf(ring: Keyring, v: KeyVersion, o: SignOpts, hash: string | undefined): (input: Buffer, sig: Buffer) => boolean {
  const { algorithm, key } = signingKey(ring, v, o, hash, !o.prehashed);
  if (!o.prehashed || algorithm === null) return (input, sig) => verify(algorithm, input, key, sig);
  const options = prehashed(o, algorithm, hash);
  return (input, sig) => verifyDigest(key.key, input, sig, options(input));
}

function hmacOf(ring: Keyring, v: KeyVersion, algorithm: string | undefined, input: Buffer): Buffer {
  return createHmac(hashName('algorithm', algorithm), hmacKeyOf(ring, v)).update(input).digest();
}

const inputOf = (i: { input?: string }): Buffer => {
  if (i.input === undefined) throw badInput('input is required');
  return fromB64('input', i.input);
};

/**
 * Vault's rule for `verify/`: every item checks a signature or every item an HMAC (an item with
 * both is a signature's); anything else fails the request.
 */
function verifyKind(batch: boolean, items: readonly { signature?: string; hmac?: string }[]): 'signature' | 'hmac' {
  const kinds = items.map((i) => (i.signature !== undefined ? 'signature' : i.hmac !== undefined ? 'hmac' : undefined));
  const sig = kinds.includes('signature');
  const mac = kinds.includes('hmac');
  const missing = kinds.includes(undefined);
  if (!batch && !sig && !mac) throw badInput("missing 'signature', 'hmac' or 'cmac' were given to verify");
  if (sig && mac) throw badInput("batch_input: elements of batch_input must all provide either 'signature', 'hmac' or 'cmac'");
  if (missing && (sig || mac)) throw badInput(`batch_input: some elements of batch_input are missing '${sig ? 'signature' : 'hmac'}'`);
  if (!sig && !mac) throw badInput("batch_input: no batch_input elements have 'signature', 'hmac' or 'cmac'");
  return sig ? 'signature' : 'hmac';
}

/** `sign/`, `verify/`, `hmac/` of the transit engine, and the keyless `hash/` and `random/`. */
export const signingRoutes: EngineRoute[] = ['sign/:name', 'sign/:name/:hash_algorithm'].map((pattern) => ({
  pattern,
  readOnly: true,
  body: SignBody,
  write: async (req: SecretsRequest<SignOpts>) => {
    const ring = await keyringOf(req as SecretsRequest);
    const [n, v] = versionFor(ring, req.body.key_version);
    const signer = signerOf(ring, v, req.body, hashOf(req));
    const encoding = req.body.marshaling_algorithm === 'jws' ? 'base64url' : 'base64';
    const run = (i: z.infer<typeof SignItem>) => {
      fromB64('context', i.context);
      return { signature: versioned(n, signer(inputOf(i)), encoding), key_version: n };
    };
    return batched(req.body.batch_input, req.body, run, ITEM_ERRORS_OK);
  },
}));

signingRoutes.push(
  ...['verify/:name', 'verify/:name/:hash_algorithm'].map((pattern) => ({
    pattern,
    readOnly: true,
    body: VerifyBody,
    write: async (req: SecretsRequest<z.infer<typeof VerifyBody>>) => {
      const ring = await keyringOf(req as SecretsRequest);
      const b = req.body;
      const kind = verifyKind(b.batch_input !== undefined, b.batch_input ?? [b]);
      const run = (i: z.infer<typeof VerifyItem>) => {
        const input = inputOf(i);
        if (kind === 'hmac') {
          const [n, mac] = parseVersioned('hmac', i.hmac!);
          const want = hmacOf(ring, versionOf(ring, n), hashOf(req) ?? b.algorithm, input);
          return { valid: want.length === mac.length && timingSafeEqual(want, mac) };
        }
        const [n, sig] = parseVersioned('signature', i.signature!);
        return { valid: verifierOf(ring, versionOf(ring, n), b, hashOf(req))(input, sig) };
      };
      return batched(b.batch_input, b, run, ITEM_ERRORS_OK);
    },
  })),
  ...['hmac/:name', 'hmac/:name/:algorithm'].map((pattern) => ({
    pattern,
    readOnly: true,
    body: HmacBody,
    write: async (req: SecretsRequest<z.infer<typeof HmacBody>>) => {
      const ring = await keyringOf(req as SecretsRequest);
      const [n, v] = versionFor(ring, req.body.key_version);
      const algorithm = req.params.algorithm ?? req.body.algorithm;
      return batched(req.body.batch_input, req.body, (i) => ({ hmac: versioned(n, hmacOf(ring, v, algorithm, inputOf(i))) }), ITEM_ERRORS_OK);
    },
  })),
  ...['hash', 'hash/:algorithm'].map((pattern) => ({
    pattern,
    readOnly: true,
    body: HashBody,
    write: async (req: SecretsRequest<z.infer<typeof HashBody>>) => {
      const digest = createHash(hashName('algorithm', req.params.algorithm ?? req.body.algorithm)).update(req.body.input).digest();
      return { data: { sum: digest.toString(req.body.format ?? 'hex') } };
    },
  })),
  // random(/:source)(/:bytes)(/:format): each segment tells what it is.
  ...['random', 'random/:a', 'random/:a/:b', 'random/:a/:b/:c'].map((pattern) => ({
    pattern,
    readOnly: true,
    body: z.object({ bytes: flexibleInt.optional(), format: z.string().optional(), source: z.string().optional() }),
    write: async (req: SecretsRequest<{ bytes?: number; format?: string; source?: string }>) => {
      let { bytes = 32, format = 'base64' } = req.body;
      for (const seg of [req.params.a, req.params.b, req.params.c]) {
        if (seg === undefined || ['platform', 'seal', 'all'].includes(seg)) continue;
        if (/^\d+$/.test(seg)) bytes = Number(seg);
        else format = seg;
      }
      if (format !== 'base64' && format !== 'hex') throw badInput(`format: "${format}" must be base64 or hex`);
      if (bytes < 1 || bytes > 128 * 1024) throw badInput(`bytes: ${bytes} must be 1 to 131072`);
      return { data: { random_bytes: randomBytes(bytes).toString(format) } };
    },
  })),
);
