import { z } from 'zod';
import { badRequest, consulObject, formatDuration, ignored, parseDuration } from './route';

/**
 * Health check definitions as the public service stores them (structs.HealthCheckDefinition), kept
 * whole so that the checker can run them: durations in nanoseconds here, encoded as Go duration
 * strings in reads (`TTL` excepted: the public service encodes it as a bare number of nanoseconds).
 */
export interface CheckDefinition {
  HTTP?: string;
  TLSServerName?: string;
  TLSSkipVerify?: boolean;
  Header?: Record<string, string[]>;
  Method?: string;
  Body?: string;
  DisableRedirects?: boolean;
  TCP?: string;
  TCPUseTLS?: boolean;
  UDP?: string;
  H2PING?: string;
  OSService?: string;
  H2PingUseTLS?: boolean;
  Interval?: number;
  OutputMaxSize?: number;
  Timeout?: number;
  DeregisterCriticalServiceAfter?: number;
  ScriptArgs?: string[];
  DockerContainerID?: string;
  Shell?: string;
  GRPC?: string;
  GRPCUseTLS?: boolean;
  AliasNode?: string;
  AliasService?: string;
  TTL?: number;
}

/** What an agent check adds to its definition: thresholds the checker applies. */
export interface CheckThresholds {
  SuccessBeforePassing?: number;
  FailuresBeforeWarning?: number;
  FailuresBeforeCritical?: number;
}

/** Go's time.Duration range: a duration beyond it does not parse in the public service. */
const MAX_DURATION_NS = 2 ** 63 - 1;

/** A Go duration, as a string ("10s") or a number of nanoseconds, to nanoseconds; a 400 naming the field otherwise. */
const Duration = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const ns = typeof value === 'number' ? (Number.isInteger(value) ? value : undefined) : value === '' ? 0 : parseDuration(value);
  if (ns === undefined || Math.abs(ns) > MAX_DURATION_NS) {
    ctx.addIssue({ code: 'custom', message: `time: invalid duration ${JSON.stringify(String(value))}` });
    return z.NEVER;
  }
  if (ns < 0) {
    ctx.addIssue({ code: 'custom', message: `must not be negative (${JSON.stringify(String(value))})` });
    return z.NEVER;
  }
  return ns;
});

const Header = z.record(z.string(), z.array(z.string()));

/** The fields of a definition, shared by the catalog's `Definition` object and the agent's flat check. */
const DEFINITION_FIELDS = {
  HTTP: z.string().optional(),
  TLSServerName: z.string().optional(),
  TLSSkipVerify: z.boolean().optional(),
  Header: Header.optional(),
  Method: z.string().optional(),
  Body: z.string().optional(),
  DisableRedirects: z.boolean().optional(),
  TCP: z.string().optional(),
  TCPUseTLS: z.boolean().optional(),
  UDP: z.string().optional(),
  H2PING: z.string().optional(),
  OSService: z.string().optional(),
  H2PingUseTLS: z.boolean().optional(),
  Interval: Duration.optional(),
  OutputMaxSize: z.number().int().min(0).max(2 ** 31).optional(),
  Timeout: Duration.optional(),
  DeregisterCriticalServiceAfter: Duration.optional(),
  ScriptArgs: z.array(z.string()).optional(),
  DockerContainerID: z.string().optional(),
  Shell: z.string().optional(),
  GRPC: z.string().optional(),
  GRPCUseTLS: z.boolean().optional(),
  AliasNode: z.string().optional(),
  AliasService: z.string().optional(),
  TTL: Duration.optional(),
};

/** A catalog check's `Definition` (structs.HealthCheckDefinition; the Go client's HealthCheckDefinition). */
export const DefinitionBody = consulObject({
  ...DEFINITION_FIELDS,
  // The Go client's HealthCheckDefinition sends its time.Duration twins too (nanoseconds).
  IntervalDuration: ignored,
  TimeoutDuration: ignored,
  DeregisterCriticalServiceAfterDuration: ignored,
  SessionName: ignored,
});

const THRESHOLD = z.number().int().min(0).max(2 ** 31);

/**
 * An agent check (structs.CheckDefinition / CheckType; the Go client's AgentCheckRegistration and
 * AgentServiceCheck): the definition's fields flat, with the check's identity and status.
 */
export const AgentCheckBody = consulObject({
  ID: z.string().optional(),
  CheckID: z.string().optional(),
  Name: z.string().optional(),
  Notes: z.string().optional(),
  Status: z.string().optional(),
  ServiceID: z.string().optional(),
  Namespace: z.string().optional(),
  ...DEFINITION_FIELDS,
  SuccessBeforePassing: THRESHOLD.optional(),
  FailuresBeforeWarning: THRESHOLD.optional(),
  FailuresBeforeCritical: THRESHOLD.optional(),
  // Known to the public service, not used by Hangar: accepted and ignored.
  Args: z.array(z.string()).optional(),
  Script: ignored,
  DeregisterCriticalServiceAfterDuration: ignored,
  IntervalDuration: ignored,
  TimeoutDuration: ignored,
  TTLDuration: ignored,
  AliasServiceID: ignored,
  Partition: ignored,
  Token: ignored,
  Type: ignored,
  ServiceName: ignored,
  ExposedPort: ignored,
  CheckType: ignored,
}, { snakeCase: true });
export type AgentCheckBody = z.infer<typeof AgentCheckBody>;

/** The definition fields of a decoded body, without the undefined ones. */
export function definitionOf(body: Partial<Record<keyof CheckDefinition, unknown>> & { Args?: string[] }): CheckDefinition {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(DEFINITION_FIELDS) as (keyof CheckDefinition)[]) {
    const value = body[key];
    if (value !== undefined && value !== '' && value !== false && value !== 0) out[key] = value;
  }
  if (body.Args?.length && !out.ScriptArgs) out.ScriptArgs = body.Args;
  return out as CheckDefinition;
}

/** The public service's check type of a definition (structs.CheckType.Type()), "" when it is none. */
export function checkTypeOf(d: CheckDefinition): string {
  const interval = (d.Interval ?? 0) > 0;
  if (d.GRPC && interval) return 'grpc';
  if (d.HTTP && interval) return 'http';
  if ((d.TTL ?? 0) > 0) return 'ttl';
  if (d.TCP && interval) return 'tcp';
  if (d.UDP && interval) return 'udp';
  if (d.AliasNode || d.AliasService) return 'alias';
  if (d.ScriptArgs?.length && d.DockerContainerID && interval) return 'docker';
  if (d.ScriptArgs?.length && interval) return 'script';
  if (d.H2PING && interval) return 'h2ping';
  if (d.OSService && interval) return 'os_service';
  return '';
}

/** The shortest interval the public service's agent runs a check at; shorter ones are raised to it. */
export const MIN_INTERVAL_NS = 1e9;

/**
 * Validates an agent check as the public service does (structs.CheckType.Validate), and refuses
 * what would run a command on the server (script and Docker checks) unless allowed.
 */
export function validateAgentCheck(d: CheckDefinition, allowScripts = false): void {
  const interval = d.Interval ?? 0;
  const ttl = d.TTL ?? 0;
  const alias = Boolean(d.AliasNode || d.AliasService);
  const intervalCheck = Boolean(d.ScriptArgs?.length || d.HTTP || d.TCP || d.UDP || d.GRPC || d.H2PING || d.OSService);
  if (interval > 0 && ttl > 0) throw badRequest('Invalid check: Interval and TTL cannot both be specified');
  if (intervalCheck && interval <= 0) throw badRequest('Invalid check: Interval must be > 0 for Script, HTTP, H2PING, TCP, UDP or OSService checks');
  if (intervalCheck && alias) throw badRequest('Invalid check: Interval cannot be set for Alias checks');
  if (alias && ttl > 0) throw badRequest('Invalid check: TTL must be not be set for Alias checks');
  if (!intervalCheck && !alias && ttl <= 0) throw badRequest('Invalid check: TTL must be > 0 for TTL checks');
  if ((d.ScriptArgs?.length || d.Shell || d.DockerContainerID) && !allowScripts) {
    throw badRequest(
      'Invalid check: script and Docker checks are disabled on this server (they would run commands); ' +
      "Hangar refuses them as the public service does without 'enable_script_checks'",
    );
  }
}

/** A definition with an interval below the minimum raised to it, as the public service's agent does. */
export function clampInterval(d: CheckDefinition): CheckDefinition {
  return d.Interval !== undefined && d.Interval > 0 && d.Interval < MIN_INTERVAL_NS ? { ...d, Interval: MIN_INTERVAL_NS } : d;
}

/** A stored definition as the public service encodes it in reads (HealthCheckDefinition.MarshalJSON). */
export function renderDefinition(d: CheckDefinition): Record<string, unknown> {
  const out: Record<string, unknown> = { ...d };
  for (const key of ['Interval', 'Timeout', 'DeregisterCriticalServiceAfter'] as const) {
    if (d[key]) out[key] = formatDuration(d[key]);
  }
  return out;
}

export const CHECK_STATUSES = ['passing', 'warning', 'critical', 'maintenance'] as const;

/** The status of a registration: empty means critical (the public service's default). */
export function checkStatus(status: string | undefined, allowed: readonly string[] = CHECK_STATUSES): string {
  if (status === undefined || status === '') return 'critical';
  if (!allowed.includes(status)) throw badRequest('Status for checks must \'passing\', \'warning\', \'critical\'');
  return status;
}

/** The worst status of some checks (maintenance > critical > warning > passing), as api.HealthChecks.AggregatedStatus. */
export function aggregatedStatus(checks: readonly { check_id: string; status: string }[]): string {
  let worst = 'passing';
  const rank: Record<string, number> = { passing: 0, warning: 1, critical: 2, maintenance: 3 };
  for (const c of checks) {
    const status = c.check_id === NODE_MAINTENANCE || c.check_id.startsWith(SERVICE_MAINTENANCE_PREFIX) ? 'maintenance' : c.status;
    if ((rank[status] ?? 2) > rank[worst]) worst = status;
  }
  return worst;
}

export const NODE_MAINTENANCE = '_node_maintenance';
export const SERVICE_MAINTENANCE_PREFIX = '_service_maintenance:';
