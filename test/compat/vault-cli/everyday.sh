#!/usr/bin/env bash
# The public service's own CLI (`vault`, built by scripts/build-public-services) running the everyday
# commands of its tutorials against Hangar, unchanged. Run by test/compat/vault-cli.test.ts, which sets
# VAULT_ADDR, VAULT_TOKEN, VAULT_BIN, DB_URL_TEMPLATE/DB_USER/DB_PASSWORD (a PostgreSQL the database
# engine manages), JWT_PUBLIC_KEY and JWT (a token it signs), and a working directory.
#
# Each step prints "== name", so a failure shows which command of which tutorial broke.
set -euo pipefail
vault() { "$VAULT_BIN" "$@"; }
step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect TEXT WANTED: WANTED (an extended regular expression) occurs in TEXT.
expect() { grep -Eq -- "$2" <<<"$1" || fail "expected /$2/ in: $1"; }
json() { jq -er "$2" <<<"$1" || fail "expected $2 in: $1"; }
# has TEXT PATTERN / line TEXT LINE: a match in TEXT (a command's output captured first: `cmd | grep -q`
# would fail under pipefail when grep exits before cmd has written everything).
has() { grep -q -- "$2" <<<"$1"; }
line() { grep -qx -- "$2" <<<"$1"; }

step "status and health"
out=$(vault status -format=json)
json "$out" '.sealed == false' >/dev/null
json "$out" '.version | test("^1\\.")' >/dev/null
vault read -format=json sys/health >/dev/null

step "secrets enable / list / tune / move / disable"
vault secrets enable -path=cli-kv1 -version=1 kv
vault secrets enable -path=cli-kv2 -version=2 -description="team secrets" kv
out=$(vault secrets list -format=json)
json "$out" '."cli-kv2/".options.version == "2"' >/dev/null
json "$out" '."cli-kv2/".description == "team secrets"' >/dev/null
vault secrets tune -default-lease-ttl=1h -max-lease-ttl=24h cli-kv1
out=$(vault read -format=json sys/mounts/cli-kv1/tune)
json "$out" '.data.default_lease_ttl == 3600' >/dev/null
vault secrets enable -path=cli-moving -version=2 kv
vault kv put -mount=cli-moving app password=before-move >/dev/null
vault secrets move cli-moving cli-moved
out=$(vault kv get -mount=cli-moved -field=password app)
[ "$out" = before-move ] || fail "moved secret reads '$out'"
vault secrets disable cli-moved
out=$(vault secrets list -format=json)
json "$out" 'has("cli-moved/") | not' >/dev/null

step "kv v2: put / get / patch / metadata / delete / undelete / destroy / list"
vault kv put -mount=cli-kv2 creds username=app password=s3cr3t >/dev/null
out=$(vault kv get -mount=cli-kv2 -format=json creds)
json "$out" '.data.data.password == "s3cr3t"' >/dev/null
json "$out" '.data.metadata.version == 1' >/dev/null
vault kv patch -mount=cli-kv2 creds password=rotated >/dev/null
out=$(vault kv get -mount=cli-kv2 -format=json creds)
json "$out" '.data.data == {"username":"app","password":"rotated"}' >/dev/null
line "$(vault kv get -mount=cli-kv2 -version=1 -field=password creds)" s3cr3t || fail "version 1 lost"
vault kv metadata put -mount=cli-kv2 -max-versions=5 -custom-metadata=owner=platform creds
out=$(vault kv metadata get -mount=cli-kv2 -format=json creds)
json "$out" '.data.max_versions == 5 and .data.custom_metadata.owner == "platform"' >/dev/null
vault kv delete -mount=cli-kv2 creds
# A deleted version reads as its metadata with no data (the CLI prints the metadata and exits 0).
out=$(vault kv get -mount=cli-kv2 -format=json creds || true)
json "$out" '.data.data == null and .data.metadata.deletion_time != ""' >/dev/null
vault kv undelete -mount=cli-kv2 -versions=2 creds
line "$(vault kv get -mount=cli-kv2 -field=password creds)" rotated || fail "undelete did not restore"
vault kv destroy -mount=cli-kv2 -versions=1 creds
out=$(vault kv metadata get -mount=cli-kv2 -format=json creds)
json "$out" '.data.versions["1"].destroyed == true' >/dev/null
vault kv put -mount=cli-kv2 team/a x=1 >/dev/null
out=$(vault kv list -mount=cli-kv2 -format=json)
json "$out" 'index("team/") != null and index("creds") != null' >/dev/null
vault kv put cli-kv2/path-syntax y=2 >/dev/null   # the older <mount>/<path> syntax detects v2 too
line "$(vault kv get -field=y cli-kv2/path-syntax)" 2 || fail "path syntax on v2"
vault kv metadata delete -mount=cli-kv2 creds
vault kv get -mount=cli-kv2 creds >/dev/null 2>&1 && fail "metadata delete left the secret"

step "kv v1: put / get / list / delete"
vault kv put cli-kv1/app token=v1-value >/dev/null
line "$(vault kv get -field=token cli-kv1/app)" v1-value || fail "kv v1 get"
out=$(vault kv list -format=json cli-kv1)
json "$out" 'index("app") != null' >/dev/null
vault kv delete cli-kv1/app
vault kv get cli-kv1/app >/dev/null 2>&1 && fail "kv v1 delete"

step "policy write / read / list / delete"
vault policy write cli-reader - <<'HCL'
path "cli-kv2/data/team/*" {
  capabilities = ["read", "list"]
}
HCL
has "$(vault policy read cli-reader)" 'cli-kv2/data/team/' || fail "policy read"
line "$(vault policy list)" cli-reader || fail "policy list"

step "token create / lookup / renew / revoke"
out=$(vault token create -format=json -policy=cli-reader -ttl=1h -display-name=My-Token---Name)
tok=$(json "$out" .auth.client_token)
acc=$(json "$out" .auth.accessor)
out=$(vault token lookup -format=json "$tok")
json "$out" '.data.display_name == "token-My-Token---Name"' >/dev/null
json "$out" '.data.policies | index("cli-reader") != null' >/dev/null
out=$(vault token renew -format=json -increment=2h "$tok")
json "$out" '.auth.lease_duration > 3600' >/dev/null
line "$(VAULT_TOKEN=$tok vault kv get -mount=cli-kv2 -field=x team/a)" 1 || fail "token cannot read under its policy"
VAULT_TOKEN=$tok vault kv put -mount=cli-kv2 team/a x=2 >/dev/null 2>&1 && fail "token wrote beyond its policy"
vault token lookup -accessor "$acc" >/dev/null
vault token revoke "$tok"
vault token lookup "$tok" >/dev/null 2>&1 && fail "revoked token still looks up"
vault policy delete cli-reader

step "PKI: root CA, intermediate, roles, issue, revoke, issuers (the public service's CA tutorial)"
vault secrets enable -path=cli-pki pki
vault secrets tune -max-lease-ttl=87600h cli-pki
vault write -field=certificate cli-pki/root/generate/internal common_name=example.com issuer_name=root-2024 ttl=87600h > root.crt
has "$(openssl x509 -in root.crt -noout -subject)" example.com || fail "root certificate"
out=$(vault list -format=json cli-pki/issuers)
json "$out" 'length == 1' >/dev/null
line "$(vault read -field=issuer_name "cli-pki/issuer/$(json "$out" '.[0]')")" root-2024 || fail "issuer read"
vault write cli-pki/roles/2024-servers allow_any_name=true >/dev/null
vault write cli-pki/config/urls issuing_certificates="$VAULT_ADDR/v1/cli-pki/ca" crl_distribution_points="$VAULT_ADDR/v1/cli-pki/crl" >/dev/null
vault secrets enable -path=cli-pki-int pki
vault secrets tune -max-lease-ttl=43800h cli-pki-int
vault write -format=json cli-pki-int/intermediate/generate/internal common_name="example.com Intermediate Authority" issuer_name=example-dot-com-intermediate | jq -r .data.csr > int.csr
vault write -format=json cli-pki/root/sign-intermediate issuer_ref=root-2024 csr=@int.csr format=pem_bundle ttl=43800h | jq -r .data.certificate > int.pem
vault write cli-pki-int/intermediate/set-signed certificate=@int.pem >/dev/null
vault write cli-pki-int/roles/example-dot-com issuer_ref="$(vault read -field=default cli-pki-int/config/issuers)" allowed_domains=example.com allow_subdomains=true max_ttl=720h >/dev/null
out=$(vault read -format=json cli-pki-int/roles/example-dot-com)
json "$out" '.data.signature_bits != null and .data.issuer_ref != null' >/dev/null
out=$(vault write -format=json cli-pki-int/issue/example-dot-com common_name=test.example.com ttl=24h)
json "$out" .data.certificate > leaf.pem
json "$out" '.data.ca_chain | length >= 2' >/dev/null
openssl verify -CAfile root.crt -untrusted int.pem leaf.pem >/dev/null || fail "leaf does not chain to the root"
serial=$(json "$out" .data.serial_number)
has "$(vault list cli-pki-int/certs)" "$serial" || fail "issued certificate not listed"
vault write cli-pki-int/revoke serial_number="$serial" >/dev/null
out=$(vault read -format=json "cli-pki-int/cert/$serial")
json "$out" '.data.revocation_time > 0' >/dev/null
vault delete cli-pki-int/roles/example-dot-com
vault list cli-pki-int/roles >/dev/null 2>&1 && fail "empty role list should be 404"
true

step "transit encrypt / decrypt"
vault secrets enable -path=cli-transit transit
vault write -f cli-transit/keys/orders >/dev/null
ct=$(vault write -field=ciphertext cli-transit/encrypt/orders plaintext="$(printf 'card 4111' | base64)")
expect "$ct" '^vault:v1:'
pt=$(vault write -field=plaintext cli-transit/decrypt/orders ciphertext="$ct" | base64 -d)
[ "$pt" = "card 4111" ] || fail "transit round trip gave '$pt'"

step "ssh sign"
vault secrets enable -path=cli-ssh ssh
vault write cli-ssh/config/ca generate_signing_key=true >/dev/null
vault write cli-ssh/roles/dev key_type=ca allow_user_certificates=true allowed_users='*' default_user=ubuntu ttl=30m >/dev/null
ssh-keygen -q -t ed25519 -N '' -f id_cli >/dev/null
vault write -field=signed_key cli-ssh/sign/dev public_key=@id_cli.pub > id_cli-cert.pub
has "$(ssh-keygen -Lf id_cli-cert.pub)" ubuntu || fail "signed certificate lacks the default user"

step "database lease: read creds, lease lookup / renew / revoke"
vault secrets enable -path=cli-db database
vault write cli-db/config/app plugin_name=postgresql-database-plugin connection_url="$DB_URL_TEMPLATE" \
  username="$DB_USER" password="$DB_PASSWORD" allowed_roles=readonly >/dev/null
vault write cli-db/roles/readonly db_name=app default_ttl=1h max_ttl=24h \
  creation_statements="CREATE ROLE \"{{name}}\" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';" >/dev/null
out=$(vault read -format=json cli-db/creds/readonly)
lease=$(json "$out" .lease_id)
vault lease lookup "$lease" >/dev/null
out=$(vault lease renew -format=json -increment=2h "$lease")
json "$out" '.lease_duration > 3600' >/dev/null
vault lease revoke "$lease"
vault lease lookup "$lease" >/dev/null 2>&1 && fail "revoked lease still looks up"
true

step "jwt login (the CLI has no jwt login handler: pipelines write auth/<mount>/login, then use the token)"
vault auth enable jwt
vault write auth/jwt/config jwt_validation_pubkeys="$JWT_PUBLIC_KEY" >/dev/null
vault write auth/jwt/role/ci role_type=jwt user_claim=sub bound_audiences=hangar-cli token_policies=default >/dev/null
out=$(vault write -format=json auth/jwt/login role=ci jwt="$JWT")
login_token=$(json "$out" .auth.client_token)
out=$(VAULT_TOKEN= vault login -no-store -format=json "$login_token")
json "$out" '.auth.policies | index("default") != null' >/dev/null
out=$(VAULT_TOKEN=$login_token vault token lookup -format=json)
json "$out" '.data.meta.role == "ci"' >/dev/null

step "operator"
vault operator key-status >/dev/null

echo "vault CLI: every step passed"
