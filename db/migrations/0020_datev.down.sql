UPDATE api_keys SET permissions = replace(permissions, ' exports:read exports:write', '') WHERE client_id IS NULL;
DROP TABLE export_files;
DROP TABLE exports;
DROP TABLE booking_lessons;
DROP TABLE file_bookings;
DROP TABLE counterparty_keys;
DROP TABLE counterparties;
DROP TABLE ledger_settings;
