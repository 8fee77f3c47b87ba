#!/usr/bin/env python
"""The Python twin of examples/typescript/main.ts: the same resources, the same triggers.

With HANGAR_REGISTRY_URL set the stack manages a running server (token from HANGAR_TOKEN at deploy
time); otherwise the embedded engine on HANGAR_DATA. The owner must exist:
`hangar registry create-org acme --owner alice`.
"""
import os

from cdktf import App, TerraformStack
from constructs import Construct
from hangar_cdktf import Box, Hangar


class ExampleStack(TerraformStack):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        Hangar(self, "Hangar", registry_url=os.environ.get("HANGAR_REGISTRY_URL") or None)
        owner = os.environ.get("HANGAR_EXAMPLE_OWNER", "acme")
        Box(
            self,
            "Web",
            owner=owner,
            name="web",
            short_description="Nginx on Debian 12",
            description="# web\n\nA box with nginx, built nightly.",
            private=False,
        )
        Box(self, "Db", owner=owner, name="db", short_description="PostgreSQL 15")


app = App()
ExampleStack(app, "hangar-example")
app.synth()
