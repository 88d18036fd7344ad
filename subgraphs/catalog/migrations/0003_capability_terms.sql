-- What a purchase needs to know of a capability (DECISIONS "Consumer intents", "Catalog"): the
-- catalog category a SpendIntent carries (the policy's category allow-list is about these), and
-- the service fee in basis points the quote adds (CEIL) to the provider cost. Published to the
-- other subgraphs as catalog.capability_terms(id), the only way they read the catalog in SQL.
ALTER TABLE catalog.capabilities
  ADD COLUMN category text NOT NULL DEFAULT 'uncategorised' CHECK (category ~ '^[a-z0-9.-]{1,64}$'),
  ADD COLUMN fee_bps  integer NOT NULL DEFAULT 0 CHECK (fee_bps BETWEEN 0 AND 10000);
UPDATE catalog.capabilities SET category = split_part(id, '.', 1);
UPDATE catalog.capabilities SET category = 'notifications' WHERE id = 'notify.*';
UPDATE catalog.capabilities SET category = 'shopping' WHERE id = 'shop.*';

-- One row for an exact capability id (family entries `x.*` match `x.<anything>`); no row when
-- the catalog does not list it. effective_maturity = the lower of provider and capability.
CREATE FUNCTION catalog.capability_terms(p_capability text)
RETURNS TABLE (capability text, provider_id text, category text, fee_bps integer, moves_money boolean,
               gate_code text, provider_maturity text, capability_maturity text, effective_maturity text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT c.id, c.provider_id, c.category, c.fee_bps, c.moves_money, c.gate_code, p.maturity, c.maturity,
         CASE WHEN array_position(ARRAY['experimental','sandbox','verified'], p.maturity)
                 < array_position(ARRAY['experimental','sandbox','verified'], c.maturity)
              THEN p.maturity ELSE c.maturity END
    FROM catalog.capabilities c JOIN catalog.providers p ON p.id = c.provider_id
   WHERE c.id = p_capability
      OR (c.id LIKE '%.*' AND p_capability LIKE left(c.id, length(c.id) - 1) || '%'
          AND p_capability ~ '^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$')
   ORDER BY (c.id = p_capability) DESC
   LIMIT 1
$$;
GRANT EXECUTE ON FUNCTION catalog.capability_terms(text) TO spend_control_service;
