-- The support console (issue 14): search a transaction by its gateway reference across
-- merchants (store.TransactionsByReference; the Sika reference already has its unique index),
-- and list the staff actions on a merchant (store.StaffActionsOfMerchant: the actions that are
-- not on a transaction name their merchant in detail).
CREATE INDEX transactions_gateway_reference_idx ON transactions (gateway_reference) WHERE gateway_reference <> '';
CREATE INDEX transaction_attempts_gateway_reference_idx ON transaction_attempts (gateway_reference) WHERE gateway_reference <> '';
CREATE INDEX staff_actions_merchant_idx ON staff_actions ((detail->>'merchant'), created_at) WHERE detail ? 'merchant';
