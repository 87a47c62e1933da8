UPDATE api_keys SET permissions = trim(replace(replace(' ' || permissions || ' ', ' collects:read ', ' '), ' collects:write ', ' '));
DROP TABLE collect_sessions;
DROP TABLE collect_item_files;
DROP TABLE collect_items;
DROP TABLE collects;
