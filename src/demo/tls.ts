/**
 * The demo's own TLS certificate for 127.0.0.1 (self-signed, valid 2020-2120), so the demo and the
 * tests serve registration files, domain proofs, an MCP endpoint and an A2A card over https
 * locally. Its private key is PUBLIC (it is in this repository): it secures nothing, and nothing
 * trusts it unless told to (the demo and the tests pass it as `FetchLimits.ca`; a real deployment
 * never does).
 */
export const DEMO_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBlzCCAT2gAwIBAgIBATAKBggqhkjOPQQDAjAkMSIwIAYDVQQDDBlyZXBpbmRl
eCBkZW1vICgxMjcuMC4wLjEpMCAXDTIwMDEwMTAwMDAwMFoYDzIxMjAwMTAxMDAw
MDAwWjAkMSIwIAYDVQQDDBlyZXBpbmRleCBkZW1vICgxMjcuMC4wLjEpMFkwEwYH
KoZIzj0CAQYIKoZIzj0DAQcDQgAEi05mG3Q+EB4cWdE4WSA7lb4cS/u1uXt0QVBt
y/I/lEouQzZdRnNc0rqCmBNB2mh3sGrmyP9hR7yGCU59kPlplqNeMFwwGgYDVR0R
BBMwEYcEfwAAAYIJbG9jYWxob3N0MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/
BAQDAgKEMB0GA1UdDgQWBBSDcHTqMF0YH9hxlCViW83Hg5WXCzAKBggqhkjOPQQD
AgNIADBFAiB9RlVe2uiAOiemoCMbmUGvldbbqw0EynQ6HUAlrG80GAIhAPYJta0i
I7FNUfkQs8AJKnuSdMnDyD2/yD9ac5ukSN4M
-----END CERTIFICATE-----
`;

export const DEMO_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgo2Ir3OxubVpyHynu
M1a7JVjxtwKgsaG+Jo/u0YZfXyehRANCAASLTmYbdD4QHhxZ0ThZIDuVvhxL+7W5
e3RBUG3L8j+USi5DNl1Gc1zSuoKYE0HaaHewaubI/2FHvIYJTn2Q+WmW
-----END PRIVATE KEY-----
`;
