# Hangar in a container: the single-file `hangar` (a Node.js single executable application, no Node.js
# in the image), run as a non-root user, with its data (SQLite database, secrets key, root token, box
# images) in a volume.
#
#   scripts/build-executable                 # or `npx projen package:executable`: dist/hangar-linux-x64
#   docker build -t hangar .
#   docker run -p 127.0.0.1:8080:8080 -p 127.0.0.1:8200:8200 -p 127.0.0.1:8500:8500 -v hangar-data:/var/lib/hangar hangar
#
# The listeners serve plain HTTP inside the container (`--tls-disable` below: a listener on 0.0.0.0 needs
# TLS or that flag); publish the ports on loopback as above, or serve TLS with certificates in a volume:
#   docker run -p 8200:8200 -v hangar-data:/var/lib/hangar -v /etc/hangar/tls:/tls:ro \
#     -e HANGAR_TLS_CERT_FILE=/tls/cert.pem -e HANGAR_TLS_KEY_FILE=/tls/key.pem hangar server
# (`hangar status`, the health check, reads the same variables and checks over https.)
#
# The build context is the repository, of which .dockerignore lets in only dist/hangar-linux-x64.
# examples/docker/compose.yaml runs this image on PostgreSQL.
FROM debian:12-slim

# The executable needs glibc, libstdc++ and libgcc_s, which the slim image has. An unprivileged user of its
# own runs the server; it owns only the data directory.
RUN useradd --system --uid 10001 --home-dir /var/lib/hangar --shell /usr/sbin/nologin hangar \
  && mkdir -p /var/lib/hangar && chown hangar:hangar /var/lib/hangar && chmod 0700 /var/lib/hangar
COPY --chmod=0755 dist/hangar-linux-x64 /usr/local/bin/hangar

ENV HANGAR_DATA=/var/lib/hangar \
    HANGAR_REGISTRY_ADDR=0.0.0.0:8080 \
    HANGAR_SECRETS_ADDR=0.0.0.0:8200 \
    HANGAR_CATALOG_ADDR=0.0.0.0:8500 \
    HANGAR_DNS_ADDR=0.0.0.0:8600 \
    HANGAR_LOG_FORMAT=json

VOLUME /var/lib/hangar
USER hangar
WORKDIR /var/lib/hangar
EXPOSE 8080 8200 8500 8600/tcp 8600/udp

# `hangar status` reads the same HANGAR_*_ADDR variables and checks the three listeners and the storage.
HEALTHCHECK --interval=10s --timeout=10s --start-period=20s --retries=3 \
  CMD ["hangar", "status", "--timeout", "5"]

# `hangar server` starts with its V8 flags (the executable's own) and sets its malloc arena limit itself
# (docs/operations.md, "Memory"); NODE_OPTIONS and GLIBC_TUNABLES can override them.
ENTRYPOINT ["hangar"]
CMD ["server", "--tls-disable"]
