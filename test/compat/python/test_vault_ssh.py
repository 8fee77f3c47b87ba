"""hvac (unchanged) against Hangar's SSH engine: CA, roles, signing, one-time passwords.

Environment: VAULT_ADDR, VAULT_TOKEN. The certificates are read back by ssh-keygen -L.
"""
import os
import subprocess
import tempfile

import hvac
import pytest

MOUNT = "ssh-hvac"


@pytest.fixture(scope="module")
def client():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    c.sys.enable_secrets_engine("ssh", path=MOUNT)
    yield c
    c.sys.disable_secrets_engine(MOUNT)


def keygen_list(signed_key):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "id-cert.pub")
        with open(path, "w") as f:
            f.write(signed_key)
        return subprocess.run(["ssh-keygen", "-L", "-f", path], check=True, capture_output=True, text=True).stdout


def client_key():
    d = tempfile.mkdtemp()
    path = os.path.join(d, "id_ed25519")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path], check=True)
    with open(path + ".pub") as f:
        return path, f.read()


def test_ca_roles_and_signing(client):
    ssh = client.secrets.ssh
    generated = ssh.submit_ca_information(key_type="ec", key_bits=384, mount_point=MOUNT)
    public_key = generated["data"]["public_key"]
    assert public_key.startswith("ecdsa-sha2-nistp384 ")
    assert ssh.read_public_key(mount_point=MOUNT)["data"]["public_key"] == public_key

    ssh.create_role(
        name="web",
        key_type="ca",
        allow_user_certificates=True,
        allowed_users="alice,bob",
        default_user="alice",
        allowed_extensions="permit-pty",
        default_extensions={"permit-pty": ""},
        ttl="1h",
        max_ttl="2h",
        mount_point=MOUNT,
    )
    role = ssh.read_role(name="web", mount_point=MOUNT)["data"]
    assert role["key_type"] == "ca" and role["ttl"] == 3600 and role["max_ttl"] == 7200
    listed = ssh.list_roles(mount_point=MOUNT)["data"]
    assert listed["keys"] == ["web"] and listed["key_info"] == {"web": {"key_type": "ca"}}

    _, pub = client_key()
    signed = ssh.sign_ssh_key(name="web", public_key=pub, mount_point=MOUNT)["data"]
    assert signed["signed_key"].endswith("\n")
    text = keygen_list(signed["signed_key"])
    assert "Serial: %d" % int(signed["serial_number"], 16) in text
    assert "alice" in text and "permit-pty" in text
    assert "(using ecdsa-sha2-nistp384)" in text

    with pytest.raises(hvac.exceptions.InvalidRequest, match="mallory is not a valid value"):
        ssh.sign_ssh_key(name="web", public_key=pub, valid_principals="mallory", mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidRequest, match="larger than the maximum"):
        ssh.sign_ssh_key(name="web", public_key=pub, ttl="3h", mount_point=MOUNT)

    ssh.delete_role(name="web", mount_point=MOUNT)
    ssh.delete_ca_information(mount_point=MOUNT)


def test_import_ca(client):
    ssh = client.secrets.ssh
    path, pub = client_key()
    with open(path) as f:
        private = f.read()
    assert ssh.submit_ca_information(private_key=private, public_key=pub, generate_signing_key=False, mount_point=MOUNT).status_code == 204
    raw = client.adapter.get("/v1/%s/public_key" % MOUNT)
    # Read back exactly as imported, comment included.
    assert raw.text == pub
    assert ssh.read_public_key(mount_point=MOUNT)["data"]["public_key"] == pub
    ssh.delete_ca_information(mount_point=MOUNT)


def test_otp(client):
    ssh = client.secrets.ssh
    ssh.create_role(name="otp", key_type="otp", default_user="ubuntu", cidr_list="10.0.0.0/8", port=2222, mount_point=MOUNT)
    assert ssh.read_role(name="otp", mount_point=MOUNT)["data"] == {
        "key_type": "otp",
        "default_user": "ubuntu",
        "cidr_list": "10.0.0.0/8",
        "exclude_cidr_list": "",
        "port": 2222,
        "allowed_users": "",
    }
    creds = ssh.generate_ssh_credentials(name="otp", ip="10.1.2.3", mount_point=MOUNT)
    assert creds["lease_id"].startswith(MOUNT + "/creds/otp/")
    assert creds["data"]["username"] == "ubuntu" and creds["data"]["port"] == 2222
    assert ssh.list_roles_by_ip(ip="10.1.2.3", mount_point=MOUNT)["data"]["roles"] == ["otp"]

    verified = ssh.verify_ssh_otp(otp=creds["data"]["key"], mount_point=MOUNT)["data"]
    assert verified == {"username": "ubuntu", "ip": "10.1.2.3", "role_name": "otp"}
    with pytest.raises(hvac.exceptions.InvalidRequest, match="OTP not found"):
        ssh.verify_ssh_otp(otp=creds["data"]["key"], mount_point=MOUNT)

    ssh.create_role(name="any", key_type="otp", default_user="ops", mount_point=MOUNT)
    ssh.configure_zeroaddress_roles(roles="any", mount_point=MOUNT)
    assert ssh.list_zeroaddress_roles(mount_point=MOUNT)["data"]["roles"] == ["any"]
    assert ssh.generate_ssh_credentials(name="any", ip="192.168.7.7", mount_point=MOUNT)["data"]["ip"] == "192.168.7.7"
    ssh.delete_zeroaddress_role(mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidRequest, match="does not belong"):
        ssh.generate_ssh_credentials(name="any", ip="192.168.7.7", mount_point=MOUNT)
