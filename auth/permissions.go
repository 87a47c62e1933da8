// Package auth owns API keys (minting, hashing, verification), the principal
// a key stands for, its permissions and its rate limit.
package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Permission is a permission string: "<resource>:read" or "<resource>:write".
type Permission string

// The permissions a key may hold.
const (
	TasksRead            Permission = "tasks:read"
	TasksWrite           Permission = "tasks:write"
	WorkspacesRead       Permission = "workspaces:read"
	WorkspacesWrite      Permission = "workspaces:write"
	MembersRead          Permission = "members:read"
	MembersWrite         Permission = "members:write"
	UsersRead            Permission = "users:read"
	UsersWrite           Permission = "users:write"
	FilesRead            Permission = "files:read"
	FilesWrite           Permission = "files:write"
	ClientsRead          Permission = "clients:read"
	ClientsWrite         Permission = "clients:write"
	AccountantUsersRead  Permission = "accountant_users:read"
	AccountantUsersWrite Permission = "accountant_users:write"
	WebhooksRead         Permission = "webhooks:read"
	WebhooksWrite        Permission = "webhooks:write"
	CollectsRead         Permission = "collects:read"
	CollectsWrite        Permission = "collects:write"
	FirmRead             Permission = "firm:read"
	FirmWrite            Permission = "firm:write"
	BankingRead          Permission = "banking:read"
	BankingWrite         Permission = "banking:write"
	ExportsRead          Permission = "exports:read"
	ExportsWrite         Permission = "exports:write"
	// MailSend lets a request mail in the firm's name: a collect link to an
	// address, an invitation.
	MailSend Permission = "mail:send"
)

// Kind is the kind of a key: the firm's own, or bound to one client.
type Kind string

// The two kinds of key.
const (
	Accountant Kind = "accountant"
	Client     Kind = "client"
)

var accountantPermissions = []Permission{
	TasksRead, TasksWrite, WorkspacesRead, WorkspacesWrite, MembersRead, MembersWrite,
	UsersRead, UsersWrite, FilesRead, FilesWrite, ClientsRead, ClientsWrite,
	AccountantUsersRead, AccountantUsersWrite, WebhooksRead, WebhooksWrite,
	CollectsRead, CollectsWrite, MailSend, FirmRead, FirmWrite, BankingRead, BankingWrite,
	ExportsRead, ExportsWrite,
}

// firmOnlyResources are the resources of the firm as a whole, which client
// keys never reach.
var firmOnlyResources = []string{"clients:", "accountant_users:", "webhooks:", "firm:", "exports:"}

// PermissionsFor returns every permission a key of the kind may hold.
// Client keys never reach the firm's own resources (firmOnlyResources).
func PermissionsFor(kind Kind) []Permission {
	if kind == Accountant {
		return append([]Permission(nil), accountantPermissions...)
	}
	var perms []Permission
	for _, p := range accountantPermissions {
		if !firmOnly(p) {
			perms = append(perms, p)
		}
	}
	return perms
}

// FirmOnly lists the permissions only accountant keys may hold.
func FirmOnly() []Permission {
	var perms []Permission
	for _, p := range accountantPermissions {
		if firmOnly(p) {
			perms = append(perms, p)
		}
	}
	return perms
}

func firmOnly(p Permission) bool {
	return slices.ContainsFunc(firmOnlyResources, func(prefix string) bool { return strings.HasPrefix(string(p), prefix) })
}

// optInPermissions are those a client key holds only when minted with them
// named: mailing in the firm's name is the firm's to grant.
var optInPermissions = []Permission{MailSend}

// DefaultPermissions returns the permissions a key of the kind is minted
// with when none are named: every one it may hold, for a client key but
// the opt-in ones.
func DefaultPermissions(kind Kind) []Permission {
	perms := PermissionsFor(kind)
	if kind == Accountant {
		return perms
	}
	return slices.DeleteFunc(perms, func(p Permission) bool { return contains(optInPermissions, p) })
}

// ParsePermissions checks a list of permission strings against what a key of
// the kind may hold, and returns them without duplicates in canonical order.
func ParsePermissions(kind Kind, names []string) ([]Permission, error) {
	allowed := PermissionsFor(kind)
	want := map[Permission]bool{}
	for _, n := range names {
		p := Permission(strings.TrimSpace(n))
		if p == "" {
			continue
		}
		if !contains(allowed, p) {
			if contains(accountantPermissions, p) {
				return nil, fmt.Errorf("a %s key may not hold %q", kind, p)
			}
			return nil, fmt.Errorf("unknown permission %q (known: %s)", p, joinPermissions(accountantPermissions))
		}
		want[p] = true
	}
	var out []Permission
	for _, p := range allowed {
		if want[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

func contains(perms []Permission, p Permission) bool {
	for _, q := range perms {
		if q == p {
			return true
		}
	}
	return false
}

func joinPermissions(perms []Permission) string {
	s := make([]string, len(perms))
	for i, p := range perms {
		s[i] = string(p)
	}
	return strings.Join(s, ",")
}
