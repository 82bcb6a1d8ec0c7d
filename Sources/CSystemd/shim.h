// libsystemd's service-manager and journal APIs, for the daemon only.
// sd_journal_send and sd_notifyf are variadic and cannot be called from Swift:
// the daemon uses sd_journal_sendv and sd_notify instead.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
