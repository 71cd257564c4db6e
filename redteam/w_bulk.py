"""Round 4 setup helper: gives a tenant N more chunks fast, in SQL as the tables' owner (the API
would embed each one: minutes per thousand on this machine). Each new chunk copies one of the
tenant's chunks (text, so postings, via the triggers) with its embedding moved by random noise, so
the vectors are distinct; every trigger (statistics, postings, version) runs as for an ingest.
    python3 w_bulk.py TENANT_NAME N      (the tenant made by w_rt.tenant, with >= 1 document)
"""
import os, subprocess, sys
import w_rt as rt

def tenant_id(name):
    st, d, _ = rt.req(rt.PORTS[0], "GET", "/v1/admin/tenants", key=rt.ADMIN)
    ts = d["tenants"] if isinstance(d, dict) else d
    return [t["id"] for t in ts if t["name"].startswith(name + "-")][0]

def bulk(name, n, batch=2000):
    tid = tenant_id(name)
    done = 0
    while done < n:
        k = min(batch, n - done)
        sql = """SET quarry.all_tenants = on;
INSERT INTO chunks (id, tenant_id, document_id, ordinal, item_start, item_end, headings, content,
  page_numbers, doc_item_refs, labels, embedding_model, embedding, token_count, context, context_version)
SELECT gen_random_uuid(), c.tenant_id, c.document_id,
  (SELECT max(ordinal) FROM chunks m WHERE m.document_id = c.document_id) + g, c.item_start, c.item_end,
  c.headings, c.content, c.page_numbers, c.doc_item_refs, c.labels, c.embedding_model,
  (SELECT array_agg(x + (random() - 0.5) * 0.05 ORDER BY i) FROM unnest(c.embedding::real[]) WITH ORDINALITY u(x, i))::vector,
  c.token_count, c.context, c.context_version
FROM (SELECT * FROM chunks WHERE tenant_id = '%s' ORDER BY ordinal, id LIMIT 1) c, generate_series(1, %d) g;""" % (tid, k)
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "quarry", "-d", "quarry_redteam4", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       env=dict(os.environ, PGPASSWORD="quarry"), check=True)
        done += k
    return tid

if __name__ == "__main__":
    print(bulk(sys.argv[1], int(sys.argv[2])))
