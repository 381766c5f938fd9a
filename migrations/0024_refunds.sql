-- Refunds: a REMBOURSEMENT transaction (OUTBOUND, held and settled like a payout) gives a
-- customer back part or all of a successful collection.
ALTER TABLE transactions DROP CONSTRAINT transactions_transaction_type_check;
ALTER TABLE transactions ADD CONSTRAINT transactions_transaction_type_check
    CHECK (transaction_type IN ('PAIEMENT', 'RECHARGE', 'RETRAIT', 'TRANSFERT', 'REMBOURSEMENT'));

-- The collection a refund gives back, and how the refund reaches the customer, fixed when it is
-- accepted: OPERATOR_REFUND (the operator's own refund of the collection, at the gateway that
-- collected it) or PAYOUT (a payout to the payer's number on the collection's network).
ALTER TABLE transactions ADD COLUMN refunded_transaction_id uuid REFERENCES transactions (id);
ALTER TABLE transactions ADD COLUMN refund_via text CHECK (refund_via IN ('OPERATOR_REFUND', 'PAYOUT'));
ALTER TABLE transactions ADD CONSTRAINT transactions_refund_link CHECK (
    (transaction_type = 'REMBOURSEMENT') = (refunded_transaction_id IS NOT NULL)
    AND (transaction_type = 'REMBOURSEMENT') = (refund_via IS NOT NULL));

-- What a collection's succeeded refunds gave back, kept on the collection's row (updated with
-- each refund's success, under that row's lock) so that lists read it without a join. Never
-- more than what the customer paid.
ALTER TABLE transactions ADD COLUMN amount_refunded numeric(20, 2) NOT NULL DEFAULT 0
    CHECK (amount_refunded >= 0 AND amount_refunded <= debited_amount);

-- The refunds of a collection, summed (succeeded and in flight) under the collection's lock
-- when a new one is asked.
CREATE INDEX transactions_refunded_idx ON transactions (refunded_transaction_id, status)
    INCLUDE (requested_amount) WHERE refunded_transaction_id IS NOT NULL;
