DROP INDEX bank_statements_account_importing;
DROP INDEX bank_statements_importing;
DELETE FROM bank_statements WHERE importing = 1;
ALTER TABLE bank_statements DROP COLUMN importing;
