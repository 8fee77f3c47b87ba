// Package core drives the secrets core of a running Hangar through vault/api only: sys/ (status,
// mounts, auth methods, tune, policies, leases, capabilities, keyring), auth/token and JWT login.
package core
