#!/usr/bin/env bash
# SIGKILL the gateway (RT_PORT, default 18580) during a multipart ingest that is embedding, restart
# it, and look for anything half written: the document, its items/chunks, the upload temp file.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; port="${RT_PORT:-18580}"; var="$here/var5"
key=$(cat "$var/key"); tid=$(python3 -c "import json;print(json.load(open('$var/key.json'))['id'])")
uri="midingest-$RANDOM.txt"
python3 -c "
import random; random.seed(3); w=[''.join(random.choice('abcdefghij') for _ in range(6)) for _ in range(3000)]
open('/tmp/r5_midingest.txt','w').write('\n\n'.join(' '.join(random.choice(w) for _ in range(100)) for _ in range(1500)))"
curl -s -m 60 "http://127.0.0.1:$port/v1/documents" -H "Authorization: Bearer $key" -F "file=@/tmp/r5_midingest.txt" -F "uri=$uri" >/tmp/r5_midingest.out &
sleep 6; echo "uploads before kill: $(ls "$var/data-$port/uploads" | wc -l)"
kill -9 "$(cat "$var/$port.pid")"; wait; echo "client got: $(head -c 200 /tmp/r5_midingest.out)"
"$here/r5_serve.sh" >/dev/null; sleep 2
echo "uploads after restart: $(ls "$var/data-$port/uploads" | wc -l) (swept when older than the body timeout)"
PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d quarry_redteam5 -Atc "set quarry.all_tenants=on;
 select 'documents with the uri', count(*) from documents where uri='$uri';
 select 'items without a document', count(*) from items i where not exists (select 1 from documents d where d.id=i.document_id);
 select 'chunks without a document', count(*) from chunks c where not exists (select 1 from documents d where d.id=c.document_id);" | grep -v SET
curl -s "http://127.0.0.1:$port/v1/documents" -H "Authorization: Bearer $key" | grep -c "$uri"
rm -f /tmp/r5_midingest.txt /tmp/r5_midingest.out
