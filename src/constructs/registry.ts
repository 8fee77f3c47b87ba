import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { Lazy } from 'cdktf';
import { Construct } from 'constructs';
import { CustomResource } from './custom-resource';
import { dependsOnLater, Hangar } from './hangar';

const OWNER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const BOX_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const VERSION = /^\d{1,9}(\.\d{1,9}){0,2}$/;
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const BOX_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

export interface BoxProps {
  /** The user or organization that owns the box; it must exist in the registry. */
  readonly owner: string;
  /** The box name: letters, digits, `.`, `-` and `_`. Changing it makes a new box. */
  readonly name: string;
  /**
   * One-line description shown in search results.
   * @default ""
   */
  readonly shortDescription?: string;
  /**
   * Long description in Markdown.
   * @default ""
   */
  readonly description?: string;
  /**
   * Whether only the owner (and its organization's members) may see the box.
   * @default true
   */
  readonly private?: boolean;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** A box in the Hangar box registry. */
export class Box extends Construct {
  /** `owner/name`, the box's tag. */
  public readonly tag: string;
  public readonly owner: string;
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: BoxProps) {
    super(scope, id);
    if (!OWNER_NAME.test(props.owner)) {
      throw new Error(`Box owner "${props.owner}" is invalid: use up to 40 letters, digits, "-" or "_", starting with a letter or digit`);
    }
    if (!BOX_NAME.test(props.name)) {
      throw new Error(`Box name "${props.name}" is invalid: use up to 100 letters, digits, ".", "-" or "_", starting with a letter or digit`);
    }
    if (props.shortDescription !== undefined && props.shortDescription.length > 1000) {
      throw new Error(`Box shortDescription is ${props.shortDescription.length} characters long; the limit is 1000`);
    }
    this.owner = props.owner;
    this.name = props.name;
    this.tag = `${props.owner}/${props.name}`;
    this._hangar = props.hangar ?? Hangar.of(this);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'registry.box',
      key: this.tag,
      desired: {
        shortDescription: props.shortDescription ?? '',
        description: props.description ?? '',
        private: props.private ?? true,
      },
    });
  }
}

export interface BoxVersionProps {
  /** The box the version belongs to. */
  readonly box: Box;
  /** The version number, `MAJOR[.MINOR[.PATCH]]` (digits). Changing it makes a new version. */
  readonly version: string;
  /**
   * Description in Markdown.
   * @default ""
   */
  readonly description?: string;
  /**
   * Whether the version is released (listed for `vagrant box add`). A released version is
   * released after its providers are created and their files uploaded; `false` revokes a
   * released version.
   * @default false
   */
  readonly released?: boolean;
}

/**
 * A version of a box. It is applied in two steps: the version itself (before its providers),
 * then its release state, after every `BoxProvider` of the version, so that `released: true`
 * only happens once a valid provider exists.
 */
export class BoxVersion extends Construct {
  public readonly box: Box;
  public readonly version: string;
  /** Whether the version is to be released. */
  public readonly released: boolean;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal the key of the version, `owner/name/version` */
  public readonly _key: string;
  /** @internal */
  public readonly _hangar: Hangar;
  private readonly providers: BoxProvider[] = [];

  constructor(scope: Construct, id: string, props: BoxVersionProps) {
    super(scope, id);
    if (!VERSION.test(props.version)) {
      throw new Error(`BoxVersion version "${props.version}" is invalid: use MAJOR[.MINOR[.PATCH]] with digits only, e.g. "1.0.0"`);
    }
    if (props.description !== undefined && props.description.length > 65536) {
      throw new Error(`BoxVersion description is ${props.description.length} characters long; the limit is 65536`);
    }
    this.box = props.box;
    this.version = props.version;
    this.released = props.released ?? false;
    this._key = `${props.box.tag}/${props.version}`;
    this._hangar = props.box._hangar;
    const kind = 'registry.box-version';
    const description = props.description ?? '';
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind,
      key: this._key,
      desired: { description },
      dependsOn: [props.box._resource],
    });
    // The release step: after the version and its providers (depends_on), again whenever a
    // provider is replaced (its identity id is a trigger), since deleting the last valid provider
    // of a released version revokes it.
    const before = () => [this._resource.config, ...this.providers.map((p) => p._resource.config)];
    const release = this._hangar._applyResource(
      this,
      'Release',
      this._hangar._payload(kind, this._key, { description, released: this.released }),
      {
        identity: this._resource.identityRef,
        providers: Lazy.stringValue({ produce: () => this.providers.map((p) => p._resource.identityRef).join(',') }),
      },
      before,
    );
    dependsOnLater(release, before);
  }

  /** @internal a provider of this version: the release step waits for it */
  public _addProvider(provider: BoxProvider): void {
    const same = this.providers.filter((p) => p.name.toLowerCase() === provider.name.toLowerCase());
    const label = (p: BoxProvider) => `${p.name}${p.architecture ? ` (${p.architecture})` : ''}`;
    if (same.some((p) => p.architecture === provider.architecture)) {
      throw new Error(`BoxProvider ${label(provider)} is declared twice for version ${this._key}; give each one another architecture`);
    }
    // A provider without an architecture means "the name's default" (API v1): beside explicit
    // architectures it would overwrite whichever of them is the default.
    if (same.length > 0 && (provider.architecture === undefined || same.some((p) => p.architecture === undefined))) {
      throw new Error(`BoxProvider ${label(provider)}: give every ${provider.name} of version ${this._key} an architecture (e.g. BoxArchitecture.UNKNOWN), or declare only one without`);
    }
    if (provider.defaultArchitecture && same.some((p) => p.defaultArchitecture)) {
      throw new Error(`BoxProvider ${label(provider)}: another ${provider.name} of version ${this._key} is already defaultArchitecture; mark only one`);
    }
    this.providers.push(provider);
  }
}

/** Checksum algorithms of box files. */
export enum BoxChecksumType {
  MD5 = 'md5',
  SHA1 = 'sha1',
  SHA256 = 'sha256',
  SHA384 = 'sha384',
  SHA512 = 'sha512',
}

const HEX_LENGTH: Record<BoxChecksumType, number> = { md5: 32, sha1: 40, sha256: 64, sha384: 96, sha512: 128 };

export interface BoxProviderProps {
  /** The version the provider belongs to. */
  readonly version: BoxVersion;
  /** The provider name (`virtualbox`, `libvirt`, `vmware_desktop`, ...). Changing it makes a new provider. */
  readonly name: string;
  /**
   * Where the box file is downloaded from. Give either `url` or `file`.
   * @default - none: `file` is required
   */
  readonly url?: string;
  /**
   * A local box file that the deployment uploads to the registry. Its checksum is computed at synth
   * time, so the file is uploaded again only when its content changes. The path is resolved to an
   * absolute one at synth time and must still hold the same file at deploy time.
   * @default - none: `url` is required
   */
  readonly file?: string;
  /**
   * The checksum of the file at `url` (hex), checked by `vagrant box add`. Not allowed with `file`
   * (computed from the file).
   * @default - no checksum (with `url`); the file's digest (with `file`)
   */
  readonly checksum?: string;
  /**
   * The checksum's algorithm.
   * @default - none with `url`; SHA256 with `file`
   */
  readonly checksumType?: BoxChecksumType;
  /**
   * The architecture of the box file (Vagrant 2.4+ picks the host's): published through the
   * registry's API v2. Changing it makes a new provider (the old one is deleted).
   * @default - none: the provider name's default architecture, through API v1 (`unknown` when created)
   */
  readonly architecture?: BoxArchitecture;
  /**
   * Makes this architecture the default of its provider name: the one API v1 clients and Vagrant
   * before 2.4 get. Needs `architecture`; at most one per provider name and version. Without any,
   * the registry makes the first architecture created the default.
   * @default false
   */
  readonly defaultArchitecture?: boolean;
}

/** Architectures of box files, as the registry's API v2 knows them. */
export enum BoxArchitecture {
  AMD64 = 'amd64',
  I386 = 'i386',
  ARM = 'arm',
  ARM64 = 'arm64',
  PPC64LE = 'ppc64le',
  PPC64 = 'ppc64',
  MIPS64LE = 'mips64le',
  MIPS64 = 'mips64',
  MIPSLE = 'mipsle',
  MIPS = 'mips',
  S390X = 's390x',
  /** Of boxes published without an architecture. */
  UNKNOWN = 'unknown',
}

/** A provider of a box version: a box file at a URL, or a local file uploaded to the registry. */
export class BoxProvider extends Construct {
  public readonly name: string;
  /** The checksum declared to the registry (computed from `file` at synth time). */
  public readonly checksum?: string;
  public readonly checksumType?: BoxChecksumType;
  /** The architecture, when one is given. */
  public readonly architecture?: BoxArchitecture;
  /** Whether this architecture is to be its provider name's default. */
  public readonly defaultArchitecture: boolean;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: BoxProviderProps) {
    super(scope, id);
    if (!PROVIDER_NAME.test(props.name)) {
      throw new Error(`BoxProvider name "${props.name}" is invalid: use up to 64 letters, digits, "-" or "_", starting with a letter or digit (e.g. "virtualbox")`);
    }
    if ((props.url === undefined) === (props.file === undefined)) {
      throw new Error(`BoxProvider ${props.name}: give either url (a box file on the web) or file (a local box file to upload), not ${props.url === undefined ? 'neither' : 'both'}`);
    }
    if (props.architecture !== undefined && !Object.values(BoxArchitecture).includes(props.architecture)) {
      throw new Error(`BoxProvider ${props.name}: architecture "${props.architecture}" is not one of ${Object.values(BoxArchitecture).join(', ')}`);
    }
    if (props.defaultArchitecture && props.architecture === undefined) {
      throw new Error(`BoxProvider ${props.name}: defaultArchitecture needs an architecture (e.g. BoxArchitecture.AMD64); without one the provider is already its name's default`);
    }
    const type = props.checksumType;
    if (type !== undefined && !(type in HEX_LENGTH)) {
      throw new Error(`BoxProvider ${props.name}: checksumType "${type}" is not one of md5, sha1, sha256, sha384, sha512`);
    }
    let desired: Record<string, unknown>;
    if (props.url !== undefined) {
      if (!BOX_URL.test(props.url) || props.url.length > 2048) {
        throw new Error(`BoxProvider ${props.name}: url "${props.url}" is not an http(s) URL; use e.g. "https://example.com/web.box"`);
      }
      if ((props.checksum === undefined) !== (type === undefined)) {
        throw new Error(`BoxProvider ${props.name}: give checksum and checksumType together (got only ${props.checksum === undefined ? 'checksumType' : 'checksum'})`);
      }
      if (props.checksum !== undefined && !new RegExp(`^[0-9a-fA-F]{${HEX_LENGTH[type!]}}$`).test(props.checksum)) {
        throw new Error(`BoxProvider ${props.name}: checksum "${props.checksum}" is not ${HEX_LENGTH[type!]} hexadecimal digits, as ${type} needs`);
      }
      this.checksum = props.checksum?.toLowerCase();
      this.checksumType = type;
      desired = { url: props.url, checksum: this.checksum ?? '', checksumType: type ?? '' };
    } else {
      if (props.checksum !== undefined) {
        throw new Error(`BoxProvider ${props.name}: checksum is computed from file; remove checksum (or use url with a checksum)`);
      }
      const file = path.resolve(props.file!);
      this.checksumType = type ?? BoxChecksumType.SHA256;
      this.checksum = fileDigest(file, this.checksumType, props.name);
      desired = { file, checksum: this.checksum, checksumType: this.checksumType };
    }
    this.name = props.name;
    this.architecture = props.architecture;
    this.defaultArchitecture = props.defaultArchitecture ?? false;
    // Only a requested default is sent: the payload of a provider without it is what it always was.
    if (this.defaultArchitecture) desired = { ...desired, defaultArchitecture: true };
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.version._hangar,
      kind: 'registry.box-provider',
      // The architecture is part of the identity (another one is another remote provider).
      key: `${props.version._key}/${props.name}${props.architecture ? `/${props.architecture}` : ''}`,
      desired,
      dependsOn: [props.version._resource],
    });
    props.version._addProvider(this);
  }
}

/** The hex digest of a file, read in chunks (a box file may be larger than memory). */
function fileDigest(file: string, type: BoxChecksumType, provider: string): string {
  let fd: number;
  try {
    if (!statSync(file).isFile()) throw new Error('not a regular file');
    fd = openSync(file, 'r');
  } catch (err) {
    throw new Error(`BoxProvider ${provider}: file "${file}" cannot be read (${(err as Error).message}); give the path of a box file`);
  }
  try {
    const hash = createHash(type);
    const chunk = Buffer.alloc(1024 * 1024);
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
    return hash.digest('hex');
  } finally {
    closeSync(fd);
  }
}
