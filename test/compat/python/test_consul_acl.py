"""py-consul (pinned) against Hangar's catalog API: ACL bootstrap, policies, roles, tokens, auth
methods and binding rules. The client comes from CONSUL_HTTP_ADDR and CONSUL_HTTP_TOKEN."""

import os
import uuid

import consul
import pytest


def client(token=None):
    return consul.Consul(token=token or os.environ["CONSUL_HTTP_TOKEN"])


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_bootstrap_is_refused_once_a_management_token_exists():
    with pytest.raises(consul.ACLPermissionDenied, match="ACL bootstrap no longer allowed"):
        client().acl.bootstrap()


def test_policies_roles_tokens():
    c = client()
    # py-consul sends rules as JSON (json.dumps of what it is given).
    rules = {"key_prefix": {"py/": {"policy": "read"}}}
    policy = c.acl.policy.create(unique("py-read"), description="reads", rules=rules)
    assert c.acl.policy.read(policy["ID"])["Name"] == policy["Name"]
    updated = c.acl.policy.update(policy["ID"], policy["Name"], description="reads py/", rules=rules)
    assert updated["Description"] == "reads py/"
    assert any(p["ID"] == policy["ID"] for p in c.acl.policy.list())
    # A missing policy is a 404, which py-consul answers as None (a 403 would raise).
    assert c.acl.policy.read(str(uuid.uuid4())) is None

    role = c.acl.role.create(
        unique("py-role"), policies_id=[policy["ID"]], templated_policies=[{"builtin/dns": {}}]
    )
    assert c.acl.role.read_by_name(role["Name"])["ID"] == role["ID"]
    assert role["TemplatedPolicies"] == [{"TemplateName": "builtin/dns"}]

    token = c.acl.token.create(description="py token", roles_id=[role["ID"]], expiration_ttl="1h")
    read = c.acl.token.read(token["AccessorID"])
    assert read["SecretID"] == token["SecretID"]
    assert read["Roles"][0]["Name"] == role["Name"]
    assert "ExpirationTime" in read
    clone = c.acl.token.clone(token["AccessorID"], description="py clone")
    assert c.acl.token.read_self(token=clone["SecretID"])["AccessorID"] == clone["AccessorID"]
    # The role's policy applies: py/ is readable, other keys are not (py-consul prefers
    # CONSUL_HTTP_TOKEN to its token argument, so the token goes with each call).
    assert c.kv.get("py/none", token=token["SecretID"])[1] is None
    with pytest.raises(consul.ACLPermissionDenied):
        c.kv.get("other/none", token=token["SecretID"])

    root = c.acl.token.read_self()
    assert c.acl.token.read(root["AccessorID"])["SecretID"] == root["SecretID"]
    assert root["AccessorID"] in [t["AccessorID"] for t in c.acl.token.list()]
    assert c.acl.token.read(str(uuid.uuid4())) is None

    for accessor in (clone["AccessorID"], token["AccessorID"]):
        assert c.acl.token.delete(accessor)
    assert c.acl.role.delete(role["ID"])
    assert c.acl.policy.delete(policy["ID"])


def test_auth_methods_and_binding_rules():
    c = client()
    name = unique("py-jwt")
    method = c.acl.auth_method.create(
        name,
        "jwt",
        max_token_ttl="10m",
        config={"JWTValidationPubKeys": [PUBLIC_KEY], "ClaimMappings": {"sub": "user"}},
    )
    assert method["MaxTokenTTL"] == "10m0s"
    assert c.acl.auth_method.read(name)["MaxTokenTTL"] == "10m0s"
    rule = c.acl.binding_rule.create(name, "service", "svc-${value.user}", selector='value.user != ""')
    policy_rule = c.acl.binding_rule.create(name, "policy", "some-policy")
    assert {r["ID"] for r in c.acl.binding_rule.list(auth_method=name)} == {rule["ID"], policy_rule["ID"]}
    assert c.acl.binding_rule.read(rule["ID"])["BindName"] == "svc-${value.user}"
    for r in (rule, policy_rule):
        assert c.acl.binding_rule.delete(r["ID"])
    assert c.acl.auth_method.delete(name)


PUBLIC_KEY = """-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFfp2HEoojUnfeHaksRgbS+LNnJZf
7whmszI1EFI15zwvRoOW3AoHq4kUSIBs0LQRZAhOrZopXIWlarUYKmnvNA==
-----END PUBLIC KEY-----"""
