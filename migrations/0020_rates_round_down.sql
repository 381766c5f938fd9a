-- Conversion never creates value (issue 21). 0002 stored every rate rounded half-up to ten
-- decimals from one value per EUR, so some rates were a hair above the ratio they stand for
-- (EUR->GNF 10050 and GNF->EUR 0.0000995025: a round trip multiplied by 1.000000125, a cent
-- gained on every 100,000 EUR). A wallet transfer's credit is rounded down (sika.ConvertAmount);
-- with every rate at or below its ratio, no chain of transfers can come back with more value
-- than it started with, at the catalogue's rates from EUR. Rates still holding the value 0002
-- wrote are truncated to ten decimals; a rate set since then is left as it is.
WITH per_eur (currency, units) AS (VALUES
    ('EUR', 1::numeric), ('XOF', 655.957), ('XAF', 655.957), ('USD', 1.16), ('GNF', 10050), ('CDF', 3320)
)
UPDATE exchange_rates x
SET rate = trunc(b.units / a.units, 10), updated_at = now()
FROM per_eur a, per_eur b
WHERE x.from_currency = a.currency AND x.to_currency = b.currency
  AND x.rate = round(b.units / a.units, 10) AND x.rate <> trunc(b.units / a.units, 10);
