import { Construct } from 'constructs';
import { durationSeconds, engineMountPath, envName } from './common';
import { SecretsMount } from './mounts';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;

/** Where a transform object lives: the engine's mount and the connection. */
export interface TransformObjectProps {
  /** The object's name. Changing it makes a new object. */
  readonly name: string;
  /**
   * The `transform` mount the object belongs to; the object is created after it exists.
   * @default - the mount at `path`
   */
  readonly mount?: SecretsMount;
  /**
   * Path of the engine when `mount` is not given.
   * @default "transform"
   */
  readonly path?: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/**
 * Objects declared in a stack by kind, mount and name, so that a reference by name (a template's
 * alphabet, a transformation's template or stores, a role's transformations) also orders the
 * deployment: the referenced object is created first and deleted last. Built-ins need no order.
 */
const declared = new WeakMap<Hangar, Map<string, CustomResource>>();

/** Creates one transform object's custom resource after its mount and the objects it names. */
function transformResource(
  scope: Construct,
  kind: 'alphabet' | 'template' | 'transformation' | 'role' | 'store',
  props: TransformObjectProps,
  desired: Record<string, unknown>,
  references: ReadonlyArray<['alphabet' | 'template' | 'transformation' | 'store', string]>,
): { path: string; resource: CustomResource } {
  const what = `Transform${kind[0].toUpperCase()}${kind.slice(1)} ${props.name}`;
  if (!NAME.test(props.name)) {
    throw new Error(`${what}: name "${props.name}" is invalid: use letters, digits, ".", "_", "-", "@" (the "builtin/" names are the engine's own)`);
  }
  const path = engineMountPath(what, props.mount, props.path, { type: 'transform', fallback: 'transform' });
  const hangar = props.hangar ?? Hangar.of(scope);
  const known = declared.get(hangar) ?? new Map<string, CustomResource>();
  declared.set(hangar, known);
  const dependsOn = [
    ...(props.mount ? [props.mount._resource] : []),
    ...references.map(([k, name]) => known.get(`${k}:${path}/${name}`)).filter((r): r is CustomResource => r !== undefined),
  ];
  const resource = new CustomResource(scope, 'Resource', { hangar, kind: `secrets.transform-${kind}`, key: `${path}/${props.name}`, desired, dependsOn });
  known.set(`${kind}:${path}/${props.name}`, resource);
  return { path, resource };
}

export interface TransformAlphabetProps extends TransformObjectProps {
  /** The characters values may contain (2 to 65536, each once), e.g. "0123456789abcdef". */
  readonly alphabet: string;
}

/** An alphabet of the transform engine (`<path>/alphabet/<name>`): the character set of FPE. */
export class TransformAlphabet extends Construct {
  /** The alphabet's name. */
  public readonly name: string;
  /** The mount path. */
  public readonly path: string;

  constructor(scope: Construct, id: string, props: TransformAlphabetProps) {
    super(scope, id);
    const chars = Array.from(props.alphabet);
    if (chars.length < 2 || chars.length > 65536) throw new Error(`TransformAlphabet ${props.name}: alphabet has ${chars.length} characters; give 2 to 65536`);
    const twice = chars.find((c, i) => chars.indexOf(c) !== i);
    if (twice !== undefined) throw new Error(`TransformAlphabet ${props.name}: the character "${twice}" appears more than once; list each character once`);
    this.name = props.name;
    this.path = transformResource(this, 'alphabet', props, { alphabet: props.alphabet }, []).path;
  }
}

export interface TransformTemplateProps extends TransformObjectProps {
  /**
   * A regular expression (RE2 syntax) whose capture groups select the characters to transform;
   * the rest of the value is kept, e.g. "(\\d{4})-(\\d{4})-(\\d{4})-(\\d{4})".
   */
  readonly pattern: string;
  /**
   * The alphabet FPE uses: a `TransformAlphabet`'s name or a built-in one ("builtin/numeric", ...).
   * @default - none (enough for masking; FPE needs one)
   */
  readonly alphabet?: string;
}

/** A template of the transform engine (`<path>/template/<name>`, type `regex`). */
export class TransformTemplate extends Construct {
  /** The template's name. */
  public readonly name: string;
  /** The mount path. */
  public readonly path: string;

  constructor(scope: Construct, id: string, props: TransformTemplateProps) {
    super(scope, id);
    if (!/\((?!\?)/.test(props.pattern)) throw new Error(`TransformTemplate ${props.name}: pattern "${props.pattern}" has no capture group; wrap what is transformed in ( )`);
    this.name = props.name;
    const alphabet = props.alphabet ?? '';
    this.path = transformResource(this, 'template', props, { type: 'regex', pattern: props.pattern, alphabet }, alphabet ? [['alphabet', alphabet]] : []).path;
  }
}

/** The kinds of transformation. */
export enum TransformationType {
  /** Format-preserving encryption (FF3-1): reversible, keeps the format. */
  FPE = 'fpe',
  /** Replaces the selected characters: not reversible. */
  MASKING = 'masking',
  /** Replaces the value by a random token kept in a store: reversible, can expire. */
  TOKENIZATION = 'tokenization',
}

/** Where an FPE transformation's tweak comes from. */
export enum TweakSource {
  /** Given by the caller with each encode and decode. */
  SUPPLIED = 'supplied',
  /** Made by the engine with each encode and returned; the caller gives it back to decode. */
  GENERATED = 'generated',
  /** One tweak kept by the engine for the transformation. */
  INTERNAL = 'internal',
}

/** How tokenization keeps its values. */
export enum TokenizationMappingMode {
  /** Values can be decoded one token at a time only. */
  DEFAULT = 'default',
  /** Also allows exporting all decoded values in an emergency. */
  EXPORTABLE = 'exportable',
}

export interface TransformTransformationProps extends TransformObjectProps {
  /** The kind of transformation; it cannot change once created (a change replaces the transformation). */
  readonly type: TransformationType;
  /**
   * The template (FPE and masking): a `TransformTemplate`'s name or a built-in one
   * ("builtin/creditcardnumber", "builtin/socialsecuritynumber").
   * @default - none (required for FPE and masking; tokenization takes none)
   */
  readonly template?: string;
  /**
   * FPE only: where the tweak comes from.
   * @default TweakSource.SUPPLIED
   */
  readonly tweakSource?: TweakSource;
  /**
   * Masking only: the character that replaces the selected ones.
   * @default "*"
   */
  readonly maskingCharacter?: string;
  /**
   * The roles that may use the transformation (globs such as "payments-*" allowed).
   * @default - none (no role may use it)
   */
  readonly allowedRoles?: string[];
  /**
   * Tokenization only: how values are kept.
   * @default TokenizationMappingMode.DEFAULT
   */
  readonly mappingMode?: TokenizationMappingMode;
  /**
   * Tokenization only: the longest life of a token, seconds ("3600") or a duration ("24h").
   * @default - tokens do not expire unless an encode asks for a TTL
   */
  readonly maxTtl?: string;
  /**
   * Tokenization only: the stores that keep the tokens, "builtin/internal" or `TransformStore` names.
   * @default ["builtin/internal"]
   */
  readonly stores?: string[];
}

/** A transformation of the transform engine (`<path>/transformations/<type>/<name>`). */
export class TransformTransformation extends Construct {
  /** The transformation's name. */
  public readonly name: string;
  /** The mount path. */
  public readonly path: string;

  constructor(scope: Construct, id: string, props: TransformTransformationProps) {
    super(scope, id);
    const what = `TransformTransformation ${props.name}`;
    const type = props.type;
    if (!Object.values(TransformationType).includes(type)) throw new Error(`${what}: type "${type}" is invalid; use TransformationType.FPE, MASKING or TOKENIZATION`);
    const only = (prop: string, value: unknown, types: TransformationType[]) => {
      if (value !== undefined && !types.includes(type)) throw new Error(`${what}: ${prop} applies to ${types.join(' and ')} transformations only, not ${type}; remove it`);
    };
    only('template', props.template, [TransformationType.FPE, TransformationType.MASKING]);
    only('tweakSource', props.tweakSource, [TransformationType.FPE]);
    only('maskingCharacter', props.maskingCharacter, [TransformationType.MASKING]);
    only('mappingMode', props.mappingMode, [TransformationType.TOKENIZATION]);
    only('maxTtl', props.maxTtl, [TransformationType.TOKENIZATION]);
    only('stores', props.stores, [TransformationType.TOKENIZATION]);
    if (type !== TransformationType.TOKENIZATION && !props.template) {
      throw new Error(`${what}: template is required for ${type}; e.g. "builtin/creditcardnumber" or a TransformTemplate's name`);
    }
    if (props.maskingCharacter !== undefined && Array.from(props.maskingCharacter).length !== 1) {
      throw new Error(`${what}: maskingCharacter "${props.maskingCharacter}" must be exactly one character, e.g. "#"`);
    }
    const stores = props.stores ?? (type === TransformationType.TOKENIZATION ? ['builtin/internal'] : []);
    if (type === TransformationType.TOKENIZATION && stores.length === 0) throw new Error(`${what}: stores is empty; give at least "builtin/internal"`);
    const desired = {
      type,
      template: props.template ?? '',
      tweakSource: type === TransformationType.FPE ? props.tweakSource ?? TweakSource.SUPPLIED : '',
      maskingCharacter: type === TransformationType.MASKING ? props.maskingCharacter ?? '*' : '',
      allowedRoles: props.allowedRoles ?? [],
      mappingMode: type === TransformationType.TOKENIZATION ? props.mappingMode ?? TokenizationMappingMode.DEFAULT : '',
      maxTtl: durationSeconds(`${what} maxTtl`, props.maxTtl),
      stores,
    };
    const references: Array<['template' | 'store', string]> = [
      ...(props.template ? [['template', props.template] as ['template', string]] : []),
      ...stores.map((s) => ['store', s] as ['store', string]),
    ];
    this.name = props.name;
    this.path = transformResource(this, 'transformation', props, desired, references).path;
  }
}

export interface TransformRoleProps extends TransformObjectProps {
  /** The transformations the role may use (each must also list the role in its `allowedRoles`). */
  readonly transformations: string[];
}

/** A role of the transform engine (`<path>/role/<name>`): the name callers encode and decode with. */
export class TransformRole extends Construct {
  /** The role's name. */
  public readonly name: string;
  /** The mount path. */
  public readonly path: string;

  constructor(scope: Construct, id: string, props: TransformRoleProps) {
    super(scope, id);
    const twice = props.transformations.find((t, i) => props.transformations.indexOf(t) !== i);
    if (twice !== undefined) throw new Error(`TransformRole ${props.name}: transformation "${twice}" is listed twice`);
    this.name = props.name;
    const references = props.transformations.map((t) => ['transformation', t] as ['transformation', string]);
    this.path = transformResource(this, 'role', props, { transformations: props.transformations }, references).path;
  }
}

export interface TransformStoreProps extends TransformObjectProps {
  /**
   * The PostgreSQL URL with `{{username}}` and `{{password}}` slots, e.g.
   * "postgresql://{{username}}:{{password}}@db.internal:5432/tokens".
   */
  readonly connectionString: string;
  /** The runtime user, which needs only SELECT, INSERT and UPDATE on the store's table. */
  readonly username: string;
  /** Environment variable holding the runtime user's password at deploy time (never in the stack). */
  readonly passwordEnv: string;
  /**
   * The database schema of the tokenization table.
   * @default "public"
   */
  readonly schema?: string;
  /**
   * Connections open at most.
   * @default 4
   */
  readonly maxOpenConnections?: number;
  /**
   * Idle connections kept.
   * @default 4
   */
  readonly maxIdleConnections?: number;
  /**
   * Longest life of a connection, seconds or a duration ("1h").
   * @default - unlimited
   */
  readonly maxConnectionLifetime?: string;
  /**
   * A user allowed to create the schema and table: when given, each deploy runs the store's schema
   * operation with it (idempotent) and grants the runtime user its rights.
   * @default - the schema is managed elsewhere
   */
  readonly schemaUsername?: string;
  /**
   * Environment variable holding `schemaUsername`'s password at deploy time.
   * @default - required with `schemaUsername`
   */
  readonly schemaPasswordEnv?: string;
}

/** An external tokenization store of the transform engine (`<path>/store/<name>`, SQL on PostgreSQL). */
export class TransformStore extends Construct {
  /** The store's name. */
  public readonly name: string;
  /** The mount path. */
  public readonly path: string;

  constructor(scope: Construct, id: string, props: TransformStoreProps) {
    super(scope, id);
    const what = `TransformStore ${props.name}`;
    if (!/^postgres(ql)?:\/\//.test(props.connectionString)) {
      throw new Error(`${what}: connectionString "${props.connectionString}" must be a postgresql:// URL with {{username}} and {{password}} slots`);
    }
    if (!props.username) throw new Error(`${what}: username is empty; give the runtime user`);
    const schema = props.schema ?? 'public';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error(`${what}: schema "${schema}" is not a plain SQL identifier (letters, digits, "_")`);
    const count = (prop: string, value: number | undefined, fallback: number, min: number) => {
      const n = value ?? fallback;
      if (!Number.isInteger(n) || n < min || n > 1000) throw new Error(`${what}: ${prop} ${n} is invalid; give an integer from ${min} to 1000`);
      return n;
    };
    if ((props.schemaUsername === undefined) !== (props.schemaPasswordEnv === undefined)) {
      throw new Error(`${what}: give schemaUsername and schemaPasswordEnv together (or neither)`);
    }
    const desired = {
      connectionString: props.connectionString,
      username: props.username,
      passwordEnv: envName(`${what} passwordEnv`, props.passwordEnv),
      schema,
      maxOpenConnections: count('maxOpenConnections', props.maxOpenConnections, 4, 1),
      maxIdleConnections: count('maxIdleConnections', props.maxIdleConnections, 4, 0),
      maxConnectionLifetime: durationSeconds(`${what} maxConnectionLifetime`, props.maxConnectionLifetime),
      schemaUsername: props.schemaUsername ?? '',
      schemaPasswordEnv: envName(`${what} schemaPasswordEnv`, props.schemaPasswordEnv) ?? '',
    };
    this.name = props.name;
    this.path = transformResource(this, 'store', props, desired, []).path;
  }
}
