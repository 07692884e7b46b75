package nodeutil

import "strings"

// ReplyMessage returns the message of an error reply as the master sent
// it, from the message a client library reports: Redis error replies
// begin with an upper-case error code (ERR, WRONGTYPE, NOSCRIPT, ...), and
// some clients (rueidis, valkey-go) drop the code of a generic one ("ERR
// unknown command" becomes "unknown command"); ReplyMessage puts "ERR "
// back before a message that begins with no code.
func ReplyMessage(msg string) string {
	if hasErrorCode(msg) {
		return msg
	}
	return "ERR " + msg
}

// hasErrorCode reports whether msg begins with an error code: a word of
// upper-case letters, digits, '-' or '_', beginning with a letter and
// ended by a space or the end.
func hasErrorCode(msg string) bool {
	word, _, _ := strings.Cut(msg, " ")
	if word == "" || word[0] < 'A' || word[0] > 'Z' {
		return false
	}
	for _, r := range word {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' {
			return false
		}
	}
	return true
}
