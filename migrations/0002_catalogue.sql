-- The reference catalogue of operators.md: countries, networks, exchange rates and default pricing.
-- Admins may edit these rows later; this migration only seeds them.

INSERT INTO countries (iso_code, name, default_currency, calling_code, national_number_lengths) VALUES
    ('BJ', 'Benin', 'XOF', '229', '{8,10}'),
    ('CI', 'Côte d''Ivoire', 'XOF', '225', '{10}'),
    ('SN', 'Senegal', 'XOF', '221', '{9}'),
    ('TG', 'Togo', 'XOF', '228', '{8}'),
    ('BF', 'Burkina Faso', 'XOF', '226', '{8}'),
    ('ML', 'Mali', 'XOF', '223', '{8}'),
    ('NE', 'Niger', 'XOF', '227', '{8}'),
    ('GN', 'Guinea', 'GNF', '224', '{9}'),
    ('CM', 'Cameroon', 'XAF', '237', '{9}'),
    ('GA', 'Gabon', 'XAF', '241', '{8}'),
    ('CG', 'Congo', 'XAF', '242', '{9}'),
    ('CD', 'DR Congo', 'CDF', '243', '{9}');

INSERT INTO networks (country_id, code, name, otp_kind, otp_instructions, redirect)
SELECT c.id, v.code, v.name, v.otp_kind, v.otp_instructions, v.redirect
FROM (VALUES
    ('BJ', 'MTN_BJ', 'MTN Mobile Money', 'NONE', '', false),
    ('BJ', 'MOOV_BJ', 'Moov Money', 'POST_PUSH', 'You will receive a code by SMS after the payment request; enter it to confirm.', false),
    ('BJ', 'CELTIIS_BJ', 'Celtiis Cash', 'NONE', '', false),
    ('CI', 'ORANGE_CI', 'Orange Money', 'PRE_PAYMENT', 'Dial #144*82# on your phone, enter your Orange Money PIN, then type the code you receive.', false),
    ('CI', 'MTN_CI', 'MTN Mobile Money', 'NONE', '', false),
    ('CI', 'MOOV_CI', 'Moov Money', 'NONE', '', false),
    ('CI', 'WAVE_CI', 'Wave', 'NONE', '', true),
    ('SN', 'ORANGE_SN', 'Orange Money', 'PRE_PAYMENT', 'Dial #144#391# on your phone, enter your Orange Money PIN, then type the code you receive.', false),
    ('SN', 'FREE_SN', 'Free Money', 'NONE', '', false),
    ('SN', 'WAVE_SN', 'Wave', 'NONE', '', true),
    ('SN', 'EXPRESSO_SN', 'E-Money Expresso', 'NONE', '', false),
    ('TG', 'TMONEY_TG', 'T-Money', 'NONE', '', false),
    ('TG', 'MOOV_TG', 'Moov Money (Flooz)', 'POST_PUSH', 'You will receive a code by SMS after the payment request; enter it to confirm.', false),
    ('BF', 'ORANGE_BF', 'Orange Money', 'PRE_PAYMENT', 'Dial *144*4*6# on your phone, enter your Orange Money PIN, then type the code you receive.', false),
    ('BF', 'MOOV_BF', 'Moov Money', 'NONE', '', false),
    ('ML', 'ORANGE_ML', 'Orange Money', 'PRE_PAYMENT', 'Dial #144#77# on your phone, enter your Orange Money PIN, then type the code you receive.', false),
    ('ML', 'MOOV_ML', 'Moov Money', 'NONE', '', false),
    ('NE', 'AIRTEL_NE', 'Airtel Money', 'NONE', '', false),
    ('GN', 'ORANGE_GN', 'Orange Money', 'NONE', '', false),
    ('GN', 'MTN_GN', 'MTN Mobile Money', 'NONE', '', false),
    ('CM', 'MTN_CM', 'MTN Mobile Money', 'NONE', '', false),
    ('CM', 'ORANGE_CM', 'Orange Money', 'NONE', '', false),
    ('GA', 'AIRTEL_GA', 'Airtel Money', 'NONE', '', false),
    ('GA', 'MOOV_GA', 'Moov Money', 'NONE', '', false),
    ('CG', 'MTN_CG', 'MTN Mobile Money', 'NONE', '', false),
    ('CG', 'AIRTEL_CG', 'Airtel Money', 'NONE', '', false),
    ('CD', 'VODACOM_CD', 'M-Pesa (Vodacom)', 'NONE', '', false),
    ('CD', 'AIRTEL_CD', 'Airtel Money', 'NONE', '', false),
    ('CD', 'ORANGE_CD', 'Orange Money', 'NONE', '', false)
) AS v (iso, code, name, otp_kind, otp_instructions, redirect)
JOIN countries c ON c.iso_code = v.iso;

-- Rates are stored for every ordered pair, derived from one value per EUR so that they agree:
-- XOF and XAF are pegged at 655.957 per EUR (so XOF<->XAF is exactly 1); the others float.
WITH per_eur (currency, units, pegged) AS (VALUES
    ('EUR', 1::numeric, true), ('XOF', 655.957, true), ('XAF', 655.957, true),
    ('USD', 1.16, false), ('GNF', 10050, false), ('CDF', 3320, false)
)
INSERT INTO exchange_rates (from_currency, to_currency, rate, auto_update)
SELECT a.currency, b.currency, round(b.units / a.units, 10), NOT (a.pegged AND b.pegged)
FROM per_eur a CROSS JOIN per_eur b WHERE a.currency <> b.currency;

-- Default prices: collections 1.5 % (operator cost 1 %), payouts 1 % (operator cost 0.6 %).
INSERT INTO pricing (network_id, direction, fee_percent, fee_fixed, gateway_fee_percent, gateway_fee_fixed)
SELECT n.id, d.direction, d.fee_percent, 0, d.gateway_fee_percent, 0
FROM networks n CROSS JOIN (VALUES ('INBOUND', 1.5, 1.0), ('OUTBOUND', 1.0, 0.6)) AS d (direction, fee_percent, gateway_fee_percent);
