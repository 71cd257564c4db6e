#!/bin/bash
# usage: gw.sh INDEX  (r0: 43010/43011, r1: 43020/43021)
i=$1; port=$((43010 + i*10)); mport=$((port+1))
d=${RT_DIR:-/tmp/redteam-r9}/r$i; mkdir -p $d/data $d/run
export QUARRY_PG_HOST=127.0.0.1 QUARRY_PG_PORT=5432 QUARRY_PG_DATABASE=redteam_r9 QUARRY_PG_USER=quarry QUARRY_PG_PASSWORD=quarry \
  QUARRY_PG_APP_USER=quarry_app QUARRY_PG_APP_PASSWORD=quarry_app QUARRY_PG_POOL_SIZE=6 \
  QUARRY_ADMIN_TOKEN=redteam-admin-token-r9-xxxx QUARRY_SANDBOX_MOUNT_PRIVACY=warn QUARRY_SANDBOX_POOL_PER_TENANT=0 \
  QUARRY_LOG_FORMAT=text QUARRY_DRAIN_GRACE_SECONDS=5 QUARRY_HTTP_PORT=$port QUARRY_METRICS_PORT=$mport \
  QUARRY_DATA_DIR=$d/data QUARRY_SANDBOX_RUN_DIR=$d/run QUARRY_GATEWAY_ID=rt9-r$i \
  QUARRY_MODEL_BASE_URL=http://127.0.0.1:43100/v1 QUARRY_MODEL_API_KEY=x QUARRY_MODEL_MAX_ATTEMPTS=1 \
  QUARRY_REPLICA_LEASE_SECONDS=${LEASE:-6} $EXTRA_ENV
exec /usr/lib/jvm/temurin-25-jdk-amd64/bin/java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xmx768m -XX:+UseSerialGC \
  -jar $(dirname "$0")/../gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar serve
