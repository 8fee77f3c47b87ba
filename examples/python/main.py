#!/usr/bin/env python
"""The Python twin of examples/typescript/main.ts: the same resources, the same triggers.

With HANGAR_REGISTRY_URL (and HANGAR_CATALOG_URL, HANGAR_SECRETS_URL) set the stack manages a running
server (token from HANGAR_TOKEN at deploy time); otherwise the embedded engine on HANGAR_DATA. The owner
must exist: `hangar registry create-org acme --owner alice`. Deploying the secrets service's CI login
needs the CI's PEM public key(s) in HANGAR_EXAMPLE_CI_JWT_PUBKEYS (e.g. CI_JWT_PUBLIC_KEY's text).
"""
import os

from cdktf import App, TerraformStack
from constructs import Construct
from hangar_cdktf import (
    AclAuthMethod,
    AclPolicy,
    AclRole,
    AuthMount,
    BindingRule,
    BindType,
    Box,
    BoxProvider,
    BoxVersion,
    CatalogNode,
    CatalogService,
    CatalogServiceCheck,
    Hangar,
    JwtAuthBackend,
    JwtAuthRole,
    JwtRoleType,
    Namespace,
    Policy,
)

CI_JWT_PUBLIC_KEY = """-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEU0nXwxYseregyYhpGiAR+XiAp3JS
Bo0xcYRbC+SawFuj1plNTCWf+5I3tcpSXj6P962UqWy1/qoU9nF30BR0GQ==
-----END PUBLIC KEY-----
"""

# The environment variable with the CI's PEM public key(s), read when the secrets login is deployed.
CI_JWT_PUBKEYS_ENV = "HANGAR_EXAMPLE_CI_JWT_PUBKEYS"


class ExampleStack(TerraformStack):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        Hangar(
            self,
            "Hangar",
            registry_url=os.environ.get("HANGAR_REGISTRY_URL") or None,
            catalog_url=os.environ.get("HANGAR_CATALOG_URL") or None,
            secrets_url=os.environ.get("HANGAR_SECRETS_URL") or None,
        )
        owner = os.environ.get("HANGAR_EXAMPLE_OWNER", "acme")
        web = Box(
            self,
            "Web",
            owner=owner,
            name="web",
            short_description="Nginx on Debian 12",
            description="# web\n\nA box with nginx, built nightly.",
            private=False,
        )
        Box(self, "Db", owner=owner, name="db", short_description="PostgreSQL 15")
        # Released once its provider is ready: the version's release step runs after its providers.
        # With HANGAR_EXAMPLE_BOX_FILE set, the provider uploads that file; else it points at a URL.
        version = BoxVersion(self, "WebV1", box=web, version="1.0.0", description="First release", released=True)
        box_file = os.environ.get("HANGAR_EXAMPLE_BOX_FILE")
        if box_file:
            BoxProvider(self, "WebV1Virtualbox", version=version, name="virtualbox", file=box_file)
        else:
            BoxProvider(
                self,
                "WebV1Virtualbox",
                version=version,
                name="virtualbox",
                url="https://boxes.example.com/acme/web-1.0.0-virtualbox.box",
            )
        # The catalog: a namespace for the team, whose CI logs in with its JWTs as service "deploy-<repo>".
        namespace = Namespace(self, "Team", name="team-web", description="The web team")
        policy = AclPolicy(self, "KvPolicy", namespace=namespace, name="web-kv", rules='key_prefix "web/" { policy = "write" }')
        AclRole(self, "Deployer", namespace=namespace, name="deployer", policies=[policy])
        ci = AclAuthMethod(
            self,
            "Ci",
            namespace=namespace,
            name="ci",
            jwt_validation_pub_keys=[CI_JWT_PUBLIC_KEY],
            jwt_supported_algs=["ES256"],
            bound_issuer="https://ci.example.com",
            claim_mappings={"repository": "repo"},
            max_token_ttl="1h",
        )
        BindingRule(
            self,
            "CiDeploys",
            auth_method=ci,
            name="deploys",
            selector='value.repo != ""',
            bind_type=BindType.SERVICE,
            bind_name="deploy-${value.repo}",
        )
        # An external service in the team's namespace, on a node no agent runs on, with a TCP check.
        lb = CatalogNode(
            self, "LbNode", name="web-lb", address="192.0.2.80", meta={"external-node": "true", "external-probe": "true"}
        )
        CatalogService(
            self,
            "Lb",
            node=lb,
            namespace=namespace,
            name="web",
            port=443,
            tags=["lb"],
            checks=[
                CatalogServiceCheck(check_id="web-lb-tcp", name="TLS port", tcp="192.0.2.80:443", interval="10s", timeout="2s")
            ],
        )
        # The secrets service: the CI logs in at auth/jwt-ci with its JWTs (audience "hangar") and gets
        # a token with policy ci-deployer. --dev already mounts auth/jwt, hence a mount of its own.
        deployer = Policy(self, "CiDeployerPolicy", name="ci-deployer", policy='path "pki/issue/web" { capabilities = ["update"] }')
        mount = AuthMount(self, "JwtCi", path="jwt-ci", description="CI logins")
        backend = JwtAuthBackend(
            self,
            "JwtCiConfig",
            auth_mount=mount,
            jwt_validation_pubkeys_env=CI_JWT_PUBKEYS_ENV,
            jwt_supported_algs=["ES256"],
            bound_issuer="https://ci.example.com",
        )
        JwtAuthRole(
            self,
            "JwtCiDeploy",
            backend=backend,
            name="deploy",
            role_type=JwtRoleType.JWT,
            user_claim="sub",
            bound_audiences=["hangar"],
            token_policies=[deployer.name],
            token_ttl="15m",
        )


app = App()
ExampleStack(app, "hangar-example")
app.synth()
