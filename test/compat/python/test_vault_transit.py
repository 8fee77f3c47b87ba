"""hvac (unchanged) against Hangar's transit engine: keys, encrypt/decrypt, rotate, rewrap, data keys,
sign/verify (also prehashed), HMAC, random, hash.

Environment: VAULT_ADDR, VAULT_TOKEN.
"""
import base64
import hashlib
import os
import uuid

import hvac
import pytest


def b64(text):
    return base64.b64encode(text.encode()).decode()


@pytest.fixture(scope="module")
def mount():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    path = f"transit-hvac-{uuid.uuid4().hex[:8]}"
    c.sys.enable_secrets_engine("transit", path=path)
    yield c, path
    c.sys.disable_secrets_engine(path)


def test_encryption(mount):
    c, path = mount
    t = c.secrets.transit
    t.create_key("app", key_type="aes256-gcm96", mount_point=path)
    assert t.read_key("app", mount_point=path)["data"]["type"] == "aes256-gcm96"
    ct = t.encrypt_data("app", b64("hello"), mount_point=path)["data"]["ciphertext"]
    assert t.decrypt_data("app", ct, mount_point=path)["data"]["plaintext"] == b64("hello")
    t.rotate_key("app", mount_point=path)
    rewrapped = t.rewrap_data("app", ct, mount_point=path)["data"]["ciphertext"]
    assert rewrapped.startswith("vault:v2:")
    t.update_key_configuration("app", min_decryption_version=2, deletion_allowed=True, mount_point=path)
    with pytest.raises(hvac.exceptions.InvalidRequest):
        t.decrypt_data("app", ct, mount_point=path)
    key = t.generate_data_key("app", key_type="plaintext", mount_point=path)["data"]
    assert t.decrypt_data("app", key["ciphertext"], mount_point=path)["data"]["plaintext"] == key["plaintext"]
    batch = t.encrypt_data("app", batch_input=[{"plaintext": b64("a")}, {"plaintext": b64("b")}], mount_point=path)
    assert len(batch["data"]["batch_results"]) == 2
    assert "app" in t.list_keys(mount_point=path)["data"]["keys"]
    t.delete_key("app", mount_point=path)


def test_signing_and_utilities(mount):
    c, path = mount
    t = c.secrets.transit
    t.create_key("signer", key_type="ecdsa-p256", mount_point=path)
    sig = t.sign_data("signer", hash_input=b64("doc"), hash_algorithm="sha2-256", mount_point=path)["data"]["signature"]
    assert t.verify_signed_data("signer", b64("doc"), signature=sig, hash_algorithm="sha2-256", mount_point=path)["data"]["valid"]
    assert not t.verify_signed_data("signer", b64("other"), signature=sig, mount_point=path)["data"]["valid"]
    # prehashed (RSA keys): the caller's SHA-256 digest of "doc" signs as "doc" itself.
    t.create_key("rsa-signer", key_type="rsa-2048", mount_point=path)
    digest = base64.b64encode(hashlib.sha256(b"doc").digest()).decode()
    pre = t.sign_data("rsa-signer", hash_input=digest, hash_algorithm="sha2-256", prehashed=True, mount_point=path)["data"]["signature"]
    assert t.verify_signed_data("rsa-signer", b64("doc"), signature=pre, hash_algorithm="sha2-256", mount_point=path)["data"]["valid"]
    plain = t.sign_data("rsa-signer", hash_input=b64("doc"), hash_algorithm="sha2-256", mount_point=path)["data"]["signature"]
    assert t.verify_signed_data("rsa-signer", digest, signature=plain, prehashed=True, mount_point=path)["data"]["valid"]
    with pytest.raises(hvac.exceptions.InvalidRequest):
        t.sign_data("rsa-signer", hash_input=b64("not a digest"), prehashed=True, mount_point=path)
    mac = t.generate_hmac("signer", b64("doc"), mount_point=path)["data"]["hmac"]
    assert t.verify_signed_data("signer", b64("doc"), hmac=mac, mount_point=path)["data"]["valid"]
    assert len(base64.b64decode(t.generate_random_bytes(n_bytes=24, mount_point=path)["data"]["random_bytes"])) == 24
    digest = t.hash_data(b64("abc"), algorithm="sha2-256", mount_point=path)["data"]["sum"]
    assert digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_batch_errors_and_convergent_encryption(mount):
    c, path = mount
    t = c.secrets.transit
    t.create_key("batch", mount_point=path)
    # One bad item: Vault's 400 with the results, which hvac raises; sign answers 200, the error in place.
    with pytest.raises(hvac.exceptions.InvalidRequest):
        t.encrypt_data("batch", batch_input=[{"plaintext": b64("a")}, {"plaintext": "not base64!"}], mount_point=path)
    t.create_key("batch-signer", key_type="ed25519", mount_point=path)
    signed = t.sign_data("batch-signer", batch_input=[{"input": b64("a")}, {"input": "!"}], mount_point=path)["data"]["batch_results"]
    assert "signature" in signed[0] and "error" in signed[1]
    # Convergent encryption: the same plaintext and context encrypt alike.
    t.create_key("conv", derived=True, convergent_encryption=True, mount_point=path)
    ctx = b64("tenant")
    one = t.encrypt_data("conv", b64("same"), context=ctx, mount_point=path)["data"]["ciphertext"]
    two = t.encrypt_data("conv", batch_input=[{"plaintext": b64("same"), "context": ctx}], mount_point=path)["data"]["batch_results"][0]["ciphertext"]
    assert one == two
    assert t.decrypt_data("conv", one, context=ctx, mount_point=path)["data"]["plaintext"] == b64("same")
    assert t.read_key("conv", mount_point=path)["data"]["convergent_encryption"] is True
