package http1

import "strconv"

// AppendRequestLine starts a request head: "METHOD target HTTP/1.1" and the
// Host header. The target (escaped path and query) is the concatenation of
// its parts.
func (c *Client) AppendRequestLine(dst []byte, method string, target ...string) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	for _, t := range target {
		dst = append(dst, t...)
	}
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, c.host...)
	return append(dst, "\r\n"...)
}

// AppendHeader adds one header line.
func AppendHeader(dst []byte, name, value string) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = append(dst, value...)
	return append(dst, "\r\n"...)
}

// AppendContentLength adds Content-Length: n.
func AppendContentLength(dst []byte, n int64) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, "\r\n"...)
}

// AppendEnd ends the head.
func AppendEnd(dst []byte) []byte { return append(dst, "\r\n"...) }
