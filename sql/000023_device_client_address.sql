-- Where a device login started (the TCP peer of `POST /v0/auth/device/start`), shown to the person asked
-- to approve it (RFC 8628 section 5.4): a code sent by someone else shows an address that is not theirs.
alter table device_authorizations add column client_address text;
