-- One meaning per amount field (issue 21): net_amount is what the receiving side gets: the
-- merchant's wallet for a collection, the beneficiary for a payout (what the operator is sent),
-- the customer for a refund; so debited_amount - net_amount = client_fee for every transaction.
-- Payouts and refunds were written with net_amount = debited_amount (what the wallet loses,
-- which debited_amount already says): a DEDUCTED payout of 831 XOF with a 9 XOF fee sent 822
-- and recorded 831. The ledger is not affected (holds and debits use debited_amount).
UPDATE transactions
SET net_amount = debited_amount - client_fee
WHERE transaction_type IN ('RETRAIT', 'REMBOURSEMENT') AND net_amount <> debited_amount - client_fee;
