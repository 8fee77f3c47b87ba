#!/usr/bin/env bash
# The public catalog's own CLI (`consul`, built by scripts/build-public-services) running the everyday
# commands of its tutorials against Hangar, unchanged. Run by test/compat/consul-cli.test.ts, which sets
# CONSUL_BIN, CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN (the root token), JWT_PUBLIC_KEY (a PEM for a jwt
# auth method) and a working directory.
#
# Each step prints "== name", so a failure shows which command broke. Not run: `operator raft
# list-peers` (/v1/operator/raft/configuration, issue 43), `snapshot save` (no /v1/snapshot yet),
# `namespace` (an Enterprise command, absent from the community CLI: namespaces are made with the
# API, then used through every command's -namespace flag).
set -euo pipefail
consul() { "$CONSUL_BIN" "$@"; }
step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect TEXT WANTED: WANTED (an extended regular expression) occurs in TEXT.
expect() { grep -Eq -- "$2" <<<"$1" || fail "expected /$2/ in: $1"; }
json() { jq -er "$2" <<<"$1" || fail "expected $2 in: $1"; }
# line TEXT LINE: a line of TEXT is exactly LINE (output captured first, see vault-cli/everyday.sh).
line() { grep -qx -- "$2" <<<"$1"; }
api() { curl -sf -H "X-Consul-Token: $CONSUL_HTTP_TOKEN" "$@"; }

step "members, info, reload, validate"
out=$(consul members)
expect "$out" 'alive +server'
node=$(consul members | awk 'NR == 2 { print $1 }')
out=$(consul info)
expect "$out" 'leader = true'
expect "$out" 'server = true'
line "$(consul reload)" 'Configuration reload triggered' || fail "reload"
echo '{"datacenter": "dc1", "data_dir": "/tmp/consul-data", "server": true}' > agent.json
expect "$(consul validate agent.json)" 'Configuration is valid'

step "catalog datacenters / nodes / services"
line "$(consul catalog datacenters)" dc1 || fail "datacenters"
out=$(consul catalog nodes)
expect "$out" "^$node "
line "$(consul catalog services)" consul || fail "the consul service"
out=$(consul catalog nodes -service=consul -detailed)
expect "$out" "^$node +[0-9a-f-]{36} "

step "services register (a file and flags) / deregister"
cat > web.json <<'JSON'
{"service": {"name": "web", "id": "web-1", "port": 8080, "tags": ["v1", "primary"],
  "meta": {"team": "platform"}, "check": {"id": "web-ttl", "name": "web alive", "ttl": "30s"}}}
JSON
line "$(consul services register web.json)" 'Registered service: web' || fail "register a file"
consul services register -name=api -id=api-1 -port=9090 -tag=blue -meta=owner=core -address=10.0.0.5 >/dev/null
out=$(consul catalog services -tags)
expect "$out" '^web +primary,v1$'
expect "$out" '^api +blue$'
out=$(consul catalog services -node="$node")
line "$out" web || fail "web on the agent's node"
line "$out" api || fail "api on the agent's node"
out=$(api "$CONSUL_HTTP_ADDR/v1/agent/service/api-1")
json "$out" '.Address == "10.0.0.5" and .Meta.owner == "core" and .Port == 9090' >/dev/null
out=$(api "$CONSUL_HTTP_ADDR/v1/health/checks/web")
json "$out" '.[0].CheckID == "web-ttl" and .[0].Status == "critical"' >/dev/null

step "watch -type=service (one event: without a handler, the CLI prints the result and exits)"
out=$(timeout 30 "$CONSUL_BIN" watch -type=service -service=web)
json "$out" '.[0].Service.ID == "web-1" and (.[0].Checks | map(.CheckID) == ["serfHealth", "web-ttl"])' >/dev/null

step "maint -enable / -disable (the node and a service)"
consul maint -enable -reason "kernel upgrade" >/dev/null
expect "$(consul maint)" 'Reason: kernel upgrade'
consul maint -enable -service=api-1 >/dev/null
out=$(api "$CONSUL_HTTP_ADDR/v1/health/checks/api")
json "$out" 'map(.CheckID) | index("_service_maintenance:api-1") != null' >/dev/null
consul maint -disable -service=api-1 >/dev/null
consul maint -disable >/dev/null
[ -z "$(consul maint)" ] || fail "maintenance still on"
line "$(consul services deregister web.json)" 'Deregistered service: web-1' || fail "deregister a file"
consul services deregister -id=api-1 >/dev/null
line "$(consul catalog services)" consul || fail "the consul service"
[ "$(consul catalog services | wc -l)" = 1 ] || fail "deregistered services still listed"

step "kv put / get / delete / export / import (-recurse, -cas, -flags)"
consul kv put app/config/db host=db1 >/dev/null
consul kv put app/config/port 5432 >/dev/null
consul kv put -flags=42 app/flags x >/dev/null
line "$(consul kv get app/config/port)" 5432 || fail "kv get"
out=$(consul kv get -recurse app/)
line "$out" 'app/config/db:host=db1' || fail "kv get -recurse: $out"
out=$(consul kv get -detailed app/flags)
expect "$out" '^Flags +42$'
out=$(consul kv get -keys app/)
line "$out" app/config/ || fail "kv get -keys: $out"
index=$(consul kv get -detailed app/config/port | awk '$1 == "ModifyIndex" { print $2 }')
consul kv put -cas -modify-index=1 app/config/port 1 >/dev/null 2>&1 && fail "a stale CAS wrote"
consul kv put -cas -modify-index="$index" app/config/port 6543 >/dev/null
line "$(consul kv get app/config/port)" 6543 || fail "CAS write"
consul kv export app/ > export.json
json "$(cat export.json)" 'length == 3 and (map(select(.key == "app/flags"))[0].flags == 42)' >/dev/null
consul kv delete -recurse app/ >/dev/null
[ -z "$(consul kv get -recurse app/)" ] || fail "kv delete -recurse"
consul kv import @export.json >/dev/null
line "$(consul kv get app/config/port)" 6543 || fail "kv import"
consul kv delete -cas -modify-index=1 app/flags >/dev/null 2>&1 && fail "a stale CAS deleted"
consul kv delete app/flags >/dev/null
consul kv get app/flags >/dev/null 2>&1 && fail "kv delete"
true

step "lock (a session holds the key while the child runs) and a semaphore"
out=$(timeout 60 "$CONSUL_BIN" lock locks/app "curl -sf -H 'X-Consul-Token: $CONSUL_HTTP_TOKEN' $CONSUL_HTTP_ADDR/v1/kv/locks/app/.lock")
json "$out" '.[0].Session | length == 36' >/dev/null
out=$(api "$CONSUL_HTTP_ADDR/v1/session/list")
json "$out" 'length == 0' >/dev/null
line "$(timeout 60 "$CONSUL_BIN" lock -n 2 sem/app echo in-semaphore)" in-semaphore || fail "semaphore"

step "acl policy create / read / list / update / delete"
out=$(consul acl policy create -name web-read -description "read web" -rules 'service "web" { policy = "read" }' -format=json)
json "$out" '.Name == "web-read"' >/dev/null
out=$(consul acl policy read -name web-read -format=json)
json "$out" '.Description == "read web"' >/dev/null
consul acl policy update -name web-read -description "read web v2" -rules 'service_prefix "web" { policy = "read" }' >/dev/null
out=$(consul acl policy read -name web-read -format=json)
json "$out" '.Description == "read web v2" and (.Rules | test("service_prefix"))' >/dev/null
out=$(consul acl policy list -format=json)
json "$out" 'map(.Name) | index("web-read") != null and index("global-management") != null' >/dev/null

step "acl role create / read / list / update"
out=$(consul acl role create -name web-role -description "web role" -policy-name web-read \
  -service-identity "web:dc1" -node-identity "node1:dc1" -format=json)
role=$(json "$out" .ID)
out=$(consul acl role read -name web-role -format=json)
json "$out" '.Policies[0].Name == "web-read" and .ServiceIdentities[0].ServiceName == "web" and .NodeIdentities[0].NodeName == "node1"' >/dev/null
consul acl role update -id "$role" -description "web role v2" >/dev/null
out=$(consul acl role list -format=json)
json "$out" 'map(select(.Name == "web-role"))[0].Description == "web role v2"' >/dev/null

step "acl token create / read / list / update, and the token at work"
out=$(consul acl token create -description "web token" -policy-name web-read -role-name web-role -format=json)
accessor=$(json "$out" .AccessorID)
secret=$(json "$out" .SecretID)
out=$(consul acl token read -accessor-id "$accessor" -format=json)
json "$out" '.Description == "web token" and .Roles[0].Name == "web-role"' >/dev/null
consul acl token update -accessor-id "$accessor" -description "web token v2" -append-policy-name web-read >/dev/null
out=$(consul acl token list -format=json)
json "$out" 'map(.Description) | index("web token v2") != null' >/dev/null
out=$(CONSUL_HTTP_TOKEN=$secret consul acl token read -self -format=json)
json "$out" '.AccessorID == "'"$accessor"'"' >/dev/null
# Dev mode allows what no rule denies, except the ACL system itself.
CONSUL_HTTP_TOKEN=$secret consul acl policy list >/dev/null 2>&1 && fail "a token without acl rules listed policies"
true

step "acl auth-method / binding-rule create / list"
jq -n --arg key "$JWT_PUBLIC_KEY" '{JWTValidationPubKeys: [$key], BoundAudiences: ["hangar"], ClaimMappings: {sub: "subject"}}' > jwt.json
out=$(consul acl auth-method create -type jwt -name ci-jwt -description "CI jobs" -max-token-ttl 10m -config @jwt.json -format=json)
json "$out" '.Type == "jwt" and .MaxTokenTTL == "10m0s"' >/dev/null
out=$(consul acl auth-method list -format=json)
json "$out" 'map(.Name) == ["ci-jwt"]' >/dev/null
out=$(consul acl binding-rule create -method ci-jwt -bind-type service -bind-name 'ci-${value.subject}' -selector 'value.subject != ""' -format=json)
json "$out" '.AuthMethod == "ci-jwt"' >/dev/null
out=$(consul acl binding-rule list -method ci-jwt -format=json)
json "$out" 'length == 1 and .[0].BindType == "service"' >/dev/null

step "acl deletes"
consul acl token delete -accessor-id "$accessor" >/dev/null
consul acl role delete -name web-role >/dev/null
consul acl policy delete -name web-read >/dev/null
consul acl auth-method delete -name ci-jwt >/dev/null
out=$(consul acl policy list -format=json)
json "$out" 'map(.Name) | index("web-read") == null' >/dev/null
[ -z "$(consul acl auth-method list)" ] || fail "auth method still listed"

step "namespaces (made with the API, used through -namespace)"
api -X PUT "$CONSUL_HTTP_ADDR/v1/namespace" -d '{"Name": "team-a", "Description": "team A"}' >/dev/null
consul kv put -namespace=team-a cfg/x 1 >/dev/null
line "$(consul kv get -namespace=team-a cfg/x)" 1 || fail "kv in a namespace"
consul kv get cfg/x >/dev/null 2>&1 && fail "a namespaced key read in default"
consul services register -namespace=team-a -name=billing -port=81 >/dev/null
line "$(consul catalog services -namespace=team-a)" billing || fail "service in a namespace"
consul catalog services | grep -qx billing && fail "a namespaced service listed in default"
consul acl policy create -namespace=team-a -name ns-read -rules 'key_prefix "" { policy = "read" }' >/dev/null
out=$(consul acl policy list -namespace=team-a -format=json)
json "$out" 'map(.Name) == ["ns-read"]' >/dev/null
consul services deregister -namespace=team-a -id=billing >/dev/null
consul kv delete -namespace=team-a cfg/x >/dev/null
consul acl policy delete -namespace=team-a -name ns-read >/dev/null
api -X DELETE "$CONSUL_HTTP_ADDR/v1/namespace/team-a" >/dev/null

echo "consul CLI: every step passed"
