"""hvac (unchanged) against Hangar's database engine and a real PostgreSQL and MariaDB.

Environment: VAULT_ADDR, VAULT_TOKEN, PG_URL_TEMPLATE, PG_HOST, PG_PORT, PG_ADMIN_USER, PG_ADMIN_PASSWORD,
MYSQL_DSN_TEMPLATE, MYSQL_HOST, MYSQL_PORT, MYSQL_ADMIN_USER, MYSQL_ADMIN_PASSWORD.
"""
import os
import subprocess

import hvac
import pytest

MOUNT = "database-hvac"
CREATE = [
    "CREATE ROLE \"{{name}}\" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';",
    "GRANT SELECT ON items TO \"{{name}}\";",
]


def psql(user, password, sql):
    """(returncode, output) of psql as a user: 0 when the login and the SQL succeeded."""
    env = dict(os.environ, PGPASSWORD=password)
    run = subprocess.run(
        ["psql", "-h", os.environ["PG_HOST"], "-p", os.environ["PG_PORT"], "-U", user, "-d", "app", "-w", "-tA",
         "-v", "ON_ERROR_STOP=1", "-c", sql],
        env=env, capture_output=True, text=True, timeout=30,
    )
    return run.returncode, (run.stdout + run.stderr).strip()


def mysql(user, password, sql):
    env = dict(os.environ, MYSQL_PWD=password)
    run = subprocess.run(
        ["mysql", "--no-defaults", "-h", os.environ["MYSQL_HOST"], "-P", os.environ["MYSQL_PORT"], "-u", user,
         "--batch", "--skip-column-names", "-e", sql],
        env=env, capture_output=True, text=True, timeout=30,
    )
    return run.returncode, (run.stdout + run.stderr).strip()


@pytest.fixture(scope="module")
def client():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    c.sys.enable_secrets_engine("database", path=MOUNT)
    c.secrets.database.configure(
        "pg", "postgresql-database-plugin", allowed_roles=["ro", "static-hvac"], mount_point=MOUNT,
        connection_url=os.environ["PG_URL_TEMPLATE"], username=os.environ["PG_ADMIN_USER"],
        password=os.environ["PG_ADMIN_PASSWORD"],
    )
    return c


def test_connection_read_list_and_verification(client):
    db = client.secrets.database
    conn = db.read_connection("pg", mount_point=MOUNT)["data"]
    assert conn["plugin_name"] == "postgresql-database-plugin"
    assert conn["allowed_roles"] == ["ro", "static-hvac"]
    assert "password" not in conn["connection_details"]
    # connection_details: only what was sent (no pool defaults the client never wrote).
    assert set(conn["connection_details"]) == {"connection_url", "username"}
    assert db.list_connections(mount_point=MOUNT)["data"]["keys"] == ["pg"]
    with pytest.raises(hvac.exceptions.InvalidRequest, match="could not verify the connection"):
        db.configure("bad", "postgresql-database-plugin", mount_point=MOUNT,
                     connection_url=os.environ["PG_URL_TEMPLATE"], username="nobody", password="wrong")
    with pytest.raises(hvac.exceptions.InvalidPath):
        db.read_connection("bad", mount_point=MOUNT)


def test_dynamic_credentials_lease_renew_revoke(client):
    db = client.secrets.database
    db.create_role("ro", "pg", CREATE, default_ttl="1h", max_ttl="2h", mount_point=MOUNT)
    role = db.read_role("ro", mount_point=MOUNT)["data"]
    assert role["default_ttl"] == 3600 and role["max_ttl"] == 7200
    assert role["creation_statements"] == CREATE
    assert db.list_roles(mount_point=MOUNT)["data"]["keys"] == ["ro"]
    creds = db.generate_credentials("ro", mount_point=MOUNT)
    assert creds["lease_duration"] == 3600 and creds["renewable"] is True
    user, password = creds["data"]["username"], creds["data"]["password"]
    assert psql(user, password, "SELECT count(*) FROM items") == (0, "2")
    status, out = psql(user, password, "DELETE FROM items")
    assert status != 0 and "permission denied" in out
    renewed = client.sys.renew_lease(creds["lease_id"], increment=600)
    assert renewed["lease_duration"] == 600
    client.sys.revoke_lease(creds["lease_id"])
    assert psql(user, password, "SELECT 1")[0] != 0
    with pytest.raises(hvac.exceptions.InvalidRequest, match="not an allowed role"):
        db.create_role("other", "pg", CREATE, mount_point=MOUNT)
        db.generate_credentials("other", mount_point=MOUNT)


def test_static_role_rotation(client):
    db = client.secrets.database
    assert psql(os.environ["PG_ADMIN_USER"], os.environ["PG_ADMIN_PASSWORD"],
                "DROP ROLE IF EXISTS static_hvac; CREATE ROLE static_hvac LOGIN PASSWORD 'initial'")[0] == 0
    db.create_static_role("static-hvac", "pg", "static_hvac", None, rotation_period=3600, mount_point=MOUNT)
    role = db.read_static_role("static-hvac", mount_point=MOUNT)["data"]
    assert role["username"] == "static_hvac" and role["rotation_period"] == 3600
    assert db.list_static_roles(mount_point=MOUNT)["data"]["keys"] == ["static-hvac"]
    first = db.get_static_credentials("static-hvac", mount_point=MOUNT)["data"]
    assert first["rotation_period"] == 3600 and 0 < first["ttl"] <= 3600 and first["last_vault_rotation"]
    assert psql("static_hvac", "initial", "SELECT 1")[0] != 0
    assert psql("static_hvac", first["password"], "SELECT 1")[0] == 0
    db.rotate_static_role_credentials("static-hvac", mount_point=MOUNT)
    second = db.get_static_credentials("static-hvac", mount_point=MOUNT)["data"]
    assert second["password"] != first["password"]
    assert psql("static_hvac", first["password"], "SELECT 1")[0] != 0
    assert psql("static_hvac", second["password"], "SELECT 1")[0] == 0
    with pytest.raises(hvac.exceptions.InvalidRequest, match="rotation_period"):
        db.create_static_role("static-hvac", "pg", "static_hvac", None, rotation_period=1, mount_point=MOUNT)
    db.delete_static_role("static-hvac", mount_point=MOUNT)


def test_mariadb_rotate_root_and_reset(client):
    db = client.secrets.database
    admin, admin_password = os.environ["MYSQL_ADMIN_USER"], os.environ["MYSQL_ADMIN_PASSWORD"]
    assert mysql(admin, admin_password, "CREATE USER IF NOT EXISTS 'root_hvac'@'%' IDENTIFIED BY 'root-hvac-initial'; "
                 "GRANT ALL PRIVILEGES ON *.* TO 'root_hvac'@'%' WITH GRANT OPTION")[0] == 0
    db.configure("my", "mysql-database-plugin", allowed_roles="*", mount_point=MOUNT,
                 connection_url=os.environ["MYSQL_DSN_TEMPLATE"], username="root_hvac", password="root-hvac-initial")
    db.rotate_root_credentials("my", mount_point=MOUNT)
    assert mysql("root_hvac", "root-hvac-initial", "SELECT 1")[0] != 0
    db.reset_connection("my", mount_point=MOUNT)
    db.create_role("my-ro", "my", ["CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'; GRANT SELECT ON app.* TO '{{name}}'@'%';"],
                   mount_point=MOUNT)
    creds = db.generate_credentials("my-ro", mount_point=MOUNT)
    user, password = creds["data"]["username"], creds["data"]["password"]
    status, out = mysql(user, password, "SHOW GRANTS")
    assert status == 0 and "GRANT SELECT ON `app`.*" in out
    client.sys.revoke_lease(creds["lease_id"])
    assert mysql(user, password, "SELECT 1")[0] != 0
    db.delete_role("my-ro", mount_point=MOUNT)
    db.delete_connection("my", mount_point=MOUNT)
    assert db.list_connections(mount_point=MOUNT)["data"]["keys"] == ["pg"]


def test_password_policy(client):
    policy = 'length = 16\nrule "charset" {\n  charset = "abc"\n  min-chars = 1\n}\n'
    client.adapter.put("/v1/sys/policies/password/hvac-abc", json={"policy": policy})
    assert client.adapter.get("/v1/sys/policies/password/hvac-abc")["data"]["policy"] == policy
    password = client.adapter.get("/v1/sys/policies/password/hvac-abc/generate")["data"]["password"]
    assert len(password) == 16 and set(password) <= set("abc")


def test_password_policy_looked_up_when_issuing_and_mysql_variants(client):
    db = client.secrets.database
    # A connection may name a password policy that does not exist yet.
    db.configure(
        "mysql-rds", "mysql-rds-database-plugin", allowed_roles=["rds"], mount_point=MOUNT, password_policy="later-hvac",
        connection_url=os.environ["MYSQL_DSN_TEMPLATE"], username=os.environ["MYSQL_ADMIN_USER"],
        password=os.environ["MYSQL_ADMIN_PASSWORD"],
    )
    assert db.read_connection("mysql-rds", mount_point=MOUNT)["data"]["password_policy"] == "later-hvac"
    db.create_role("rds", "mysql-rds", ["CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}';"], mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidRequest, match="no password policy found"):
        db.generate_credentials("rds", mount_point=MOUNT)
    policy = 'length = 24\nrule "charset" { charset = "abcdefghij" }'
    client.adapter.put("/v1/sys/policies/password/later-hvac", json={"policy": policy})
    creds = db.generate_credentials("rds", mount_point=MOUNT)
    assert len(creds["data"]["username"]) <= 16
    assert mysql(creds["data"]["username"], creds["data"]["password"], "SELECT 1")[0] == 0
    client.sys.revoke_lease(creds["lease_id"])
    db.delete_role("rds", mount_point=MOUNT)
    db.delete_connection("mysql-rds", mount_point=MOUNT)
    client.adapter.delete("/v1/sys/policies/password/later-hvac")
