// Home directories from the password file, without the C library's NSS.
//
// Why not getpwnam(3): the shipped devgraph is a static executable (its
// start-up is on the path of every guard hook and checkpoint), and a static
// glibc answers getpwnam() only by loading NSS modules at run time, which
// must then match the glibc it was built with. devgraph needs one field
// (the home directory, for `~` and `~user` in the guard), so it reads the
// password file itself.
//
// Contract: entries come only from the file (the "files" source of NSS);
// users known only to LDAP, SSSD or systemd-userdb are not found. The first
// entry with the name (or uid) wins, as with getpwnam(). A line that is not
// seven ':'-separated fields is skipped. An unreadable file finds no one.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace devgraph {

inline constexpr const char* kPasswdFile = "/etc/passwd";

// The home directory of user `name`, or nullopt (unknown user, empty home).
std::optional<std::string> home_of_user(std::string_view name,
                                        const std::string& passwd_file = kPasswdFile);

// The home directory of user id `uid`, or nullopt.
std::optional<std::string> home_of_uid(uid_t uid, const std::string& passwd_file = kPasswdFile);

}  // namespace devgraph
