-- Facet tags, issuer hosts and declared types are free text from the chain and can exceed a
-- btree entry (~2.7 kB). The aggregate tables are rebuilt wholesale, never upserted, so they need
-- no unique key on that text: drop those primary keys and index the short columns only.
ALTER TABLE agg_facet DROP CONSTRAINT IF EXISTS agg_facet_pkey;
ALTER TABLE agg_issuer DROP CONSTRAINT IF EXISTS agg_issuer_pkey;
ALTER TABLE agg_type DROP CONSTRAINT IF EXISTS agg_type_pkey;
CREATE INDEX IF NOT EXISTS agg_facet_network_idx ON agg_facet (network);
