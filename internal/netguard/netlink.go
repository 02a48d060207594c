//go:build linux

// Package netguard takes the way out of the network namespace it runs in. On Docker 20.10 a container on
// an internal network still has a default route to the bridge gateway, and the gateway is the host itself:
// only iptables stops forwarded traffic, and a host service on 0.0.0.0 answers. netguard deletes the
// default routes and makes each former gateway unreachable, then holds the namespace for the containers
// that join it (docker-compose.yml: stack-net). Routes are read and changed over rtnetlink with messages
// built here, with the standard library alone.
package netguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"time"
)

// Route is the part of an rtnetlink route message netguard reads and writes.
type Route struct {
	Family   uint8  // syscall.AF_INET or syscall.AF_INET6
	Type     uint8  // syscall.RTN_UNICAST, syscall.RTN_UNREACHABLE, …
	Table    uint32 // 0: unspecified (a lookup)
	Protocol uint8
	Scope    uint8
	Dst      netip.Prefix // /0 for a default route
	Gateway  netip.Addr   // invalid when the route has none
	OIF      uint32       // output interface index, 0 when none
	Priority uint32       // metric, 0 when none
	// Multipath: the next hops are in RTA_MULTIPATH, which netguard does not read, so Gateway is not
	// the whole story.
	Multipath bool
}

// IsDefault reports whether r forwards traffic for every destination of its family.
func (r Route) IsDefault() bool {
	return r.Dst.IsValid() && r.Dst.Bits() == 0 && r.Type == syscall.RTN_UNICAST
}

func (r Route) String() string {
	s := r.Dst.String()
	if r.IsDefault() {
		s = "default"
	}
	if r.Type == syscall.RTN_UNREACHABLE {
		s = "unreachable " + s
	}
	if r.Gateway.IsValid() {
		s += " via " + r.Gateway.String()
	}
	return s
}

const rtaMultipath = 0x9 // RTA_MULTIPATH, which package syscall does not name

// familyOf is the address family of a.
func familyOf(a netip.Addr) uint8 {
	if a.Is4() {
		return syscall.AF_INET
	}
	return syscall.AF_INET6
}

// encodeRoute builds one rtnetlink message about r: RTM_NEWROUTE and RTM_DELROUTE change the table,
// RTM_GETROUTE asks the kernel how it would route to r.Dst. Attributes that are zero are left out, as
// iproute2 does, so that a delete matches on what the route has and nothing else.
func encodeRoute(msgType, flags uint16, seq uint32, r Route) []byte {
	var rtm [syscall.SizeofRtMsg]byte
	rtm[0] = r.Family
	rtm[1] = uint8(r.Dst.Bits())
	// rtm_table is one byte; a larger id goes in RTA_TABLE only (iproute2 does the same).
	if r.Table < 256 {
		rtm[4] = uint8(r.Table)
	}
	rtm[5] = r.Protocol
	rtm[6] = r.Scope
	rtm[7] = r.Type
	b := rtm[:]
	if r.Table != 0 {
		b = appendAttr(b, syscall.RTA_TABLE, u32(r.Table))
	}
	if r.Dst.Bits() > 0 {
		b = appendAttr(b, syscall.RTA_DST, r.Dst.Addr().AsSlice())
	}
	if r.Gateway.IsValid() {
		b = appendAttr(b, syscall.RTA_GATEWAY, r.Gateway.AsSlice())
	}
	if r.OIF != 0 {
		b = appendAttr(b, syscall.RTA_OIF, u32(r.OIF))
	}
	if r.Priority != 0 {
		b = appendAttr(b, syscall.RTA_PRIORITY, u32(r.Priority))
	}
	hdr := make([]byte, syscall.SizeofNlMsghdr, syscall.SizeofNlMsghdr+len(b))
	binary.NativeEndian.PutUint32(hdr[0:], uint32(syscall.SizeofNlMsghdr+len(b)))
	binary.NativeEndian.PutUint16(hdr[4:], msgType)
	binary.NativeEndian.PutUint16(hdr[6:], flags)
	binary.NativeEndian.PutUint32(hdr[8:], seq)
	// nlmsg_pid 0: the kernel fills in the sender.
	return append(hdr, b...)
}

func u32(v uint32) []byte {
	return binary.NativeEndian.AppendUint32(nil, v)
}

// appendAttr appends one rtattr, padded to 4 bytes.
func appendAttr(b []byte, typ uint16, data []byte) []byte {
	l := syscall.SizeofRtAttr + len(data)
	b = binary.NativeEndian.AppendUint16(b, uint16(l))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, data...)
	for l%4 != 0 {
		b = append(b, 0)
		l++
	}
	return b
}

// decodeRoute reads one RTM_NEWROUTE message (a dump entry or the answer to a lookup).
func decodeRoute(m *syscall.NetlinkMessage) (Route, error) {
	if len(m.Data) < syscall.SizeofRtMsg {
		return Route{}, fmt.Errorf("route message of %d bytes, shorter than its header", len(m.Data))
	}
	r := Route{
		Family: m.Data[0], Table: uint32(m.Data[4]), Protocol: m.Data[5], Scope: m.Data[6], Type: m.Data[7],
	}
	bits := int(m.Data[1])
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return Route{}, fmt.Errorf("route attributes: %w", err)
	}
	var dst netip.Addr
	for _, a := range attrs {
		switch a.Attr.Type {
		case syscall.RTA_DST:
			dst, _ = netip.AddrFromSlice(a.Value)
		case syscall.RTA_GATEWAY:
			r.Gateway, _ = netip.AddrFromSlice(a.Value)
		case syscall.RTA_OIF:
			if len(a.Value) == 4 {
				r.OIF = binary.NativeEndian.Uint32(a.Value)
			}
		case syscall.RTA_PRIORITY:
			if len(a.Value) == 4 {
				r.Priority = binary.NativeEndian.Uint32(a.Value)
			}
		case syscall.RTA_TABLE:
			if len(a.Value) == 4 {
				r.Table = binary.NativeEndian.Uint32(a.Value)
			}
		case rtaMultipath:
			r.Multipath = true
		}
	}
	if !dst.IsValid() { // a default route carries no RTA_DST
		switch r.Family {
		case syscall.AF_INET:
			dst = netip.IPv4Unspecified()
		case syscall.AF_INET6:
			dst = netip.IPv6Unspecified()
		default:
			return Route{}, fmt.Errorf("route of address family %d", r.Family)
		}
	}
	if r.Dst, err = dst.Prefix(bits); err != nil {
		return Route{}, fmt.Errorf("route to %s/%d: %w", dst, bits, err)
	}
	return r, nil
}

// decodeReplies reads the kernel's answer to one request: routes (a dump or a lookup), an
// acknowledgement (no routes, no error), or the error it reported as a syscall.Errno.
func decodeReplies(msgs []syscall.NetlinkMessage) ([]Route, error) {
	var routes []Route
	for i := range msgs {
		m := &msgs[i]
		switch m.Header.Type {
		case syscall.NLMSG_DONE:
			return routes, nil
		case syscall.NLMSG_ERROR:
			if len(m.Data) < 4 {
				return nil, errors.New("truncated netlink error message")
			}
			if code := int32(binary.NativeEndian.Uint32(m.Data)); code != 0 {
				return nil, syscall.Errno(-code)
			}
			return routes, nil // an acknowledgement
		case syscall.RTM_NEWROUTE:
			r, err := decodeRoute(m)
			if err != nil {
				return nil, err
			}
			routes = append(routes, r)
		}
	}
	return routes, nil
}

// RTNetlink is the kernel's routing table of the calling process's namespace.
type RTNetlink struct {
	seq uint32
}

// Routes dumps every route of one family, all tables.
func (n *RTNetlink) Routes(family uint8) ([]Route, error) {
	b, err := syscall.NetlinkRIB(syscall.RTM_GETROUTE, int(family))
	if err != nil {
		return nil, err
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil, err
	}
	return decodeReplies(msgs)
}

// Add creates r, or replaces a route with the same key.
func (n *RTNetlink) Add(r Route) error {
	_, err := n.roundTrip(syscall.RTM_NEWROUTE, syscall.NLM_F_ACK|syscall.NLM_F_CREATE|syscall.NLM_F_REPLACE, r)
	return err
}

// Delete removes r.
func (n *RTNetlink) Delete(r Route) error {
	_, err := n.roundTrip(syscall.RTM_DELROUTE, syscall.NLM_F_ACK, r)
	return err
}

// Lookup asks the kernel how it would route a packet to a (`ip route get`); no packet is sent. With no
// route the error is the errno a connect would get (ENETUNREACH, EHOSTUNREACH).
func (n *RTNetlink) Lookup(a netip.Addr) (Route, error) {
	routes, err := n.roundTrip(syscall.RTM_GETROUTE, 0, Route{Family: familyOf(a), Dst: netip.PrefixFrom(a, a.BitLen())})
	if err != nil {
		return Route{}, err
	}
	if len(routes) != 1 {
		return Route{}, fmt.Errorf("route lookup for %s answered %d routes", a, len(routes))
	}
	return routes[0], nil
}

// roundTrip sends one request on a fresh NETLINK_ROUTE socket and decodes the answer.
func (n *RTNetlink) roundTrip(msgType, flags uint16, r Route) ([]Route, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	defer syscall.Close(fd)
	// The kernel answers at once; a bound on the wait turns a surprise into an error, not a hang.
	tv := syscall.NsecToTimeval(int64(5 * time.Second))
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	kernel := &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	n.seq++
	seq := n.seq
	if err := syscall.Sendto(fd, encodeRoute(msgType, syscall.NLM_F_REQUEST|flags, seq, r), 0, kernel); err != nil {
		return nil, fmt.Errorf("netlink send: %w", err)
	}
	buf := make([]byte, 1<<16)
	for {
		nr, _, err := syscall.Recvfrom(fd, buf, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("netlink receive: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:nr])
		if err != nil {
			return nil, fmt.Errorf("netlink receive: %w", err)
		}
		var mine []syscall.NetlinkMessage
		for _, m := range msgs {
			if m.Header.Seq == seq {
				mine = append(mine, m)
			}
		}
		if len(mine) > 0 {
			return decodeReplies(mine)
		}
	}
}
