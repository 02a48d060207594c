// Package pgwire is a minimal PostgreSQL client speaking frontend/backend
// protocol 3.0 with the simple query protocol only, built on the standard
// library alone. It exists so the sampling collector can be built where no
// third-party modules are available (a Docker build with GOPROXY=off).
//
// It supports trust, cleartext password, MD5 and SCRAM-SHA-256
// authentication over plaintext TCP; there is no TLS. Results come back in
// text format. A Conn is not safe for concurrent use.
package pgwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

const (
	defaultPort = 5432
	// maxMessage bounds what one backend message may make us allocate, so a
	// confused or hostile peer cannot exhaust memory with a bogus length.
	maxMessage = 64 << 20

	protocolVersion = 3 << 16
	cancelCode      = 80877102
)

// Config says where and as whom to connect.
type Config struct {
	Host            string
	Port            int
	User            string
	Password        string
	Database        string
	ApplicationName string
	// ConnectTimeout bounds dialling, authentication and startup together;
	// zero leaves only the context's deadline.
	ConnectTimeout time.Duration
}

// Error is an ErrorResponse from the server. Code is the SQLSTATE, e.g.
// "55000" (object not in prerequisite state) or "42501" (insufficient
// privilege).
type Error struct {
	Severity string
	Code     string
	Message  string
	Detail   string
}

func (e *Error) Error() string {
	s := e.Severity + ": " + e.Message + " (SQLSTATE " + e.Code + ")"
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// fatal reports whether the server ends the session after this error.
func (e *Error) fatal() bool { return e.Severity == "FATAL" || e.Severity == "PANIC" }

// Conn is one session with the server.
type Conn struct {
	nc   net.Conn
	r    *bufio.Reader
	addr string
	// pid and key identify the session for a CancelRequest.
	pid uint32
	key []byte
	// broken is set once the protocol state is unknown (I/O error, timeout,
	// fatal error); the connection is closed and every later call fails.
	broken error
}

// Connect opens a session and waits until the server is ready for queries.
func Connect(ctx context.Context, cfg Config) (*Conn, error) {
	if cfg.Host == "" {
		cfg.Host = "localhost"
	}
	if cfg.Port == 0 {
		cfg.Port = defaultPort
	}
	if cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pgwire: connect %s: %w", addr, err)
	}
	c := &Conn{nc: nc, r: bufio.NewReader(nc), addr: addr}
	end := c.watch(ctx)
	if err = end(c.startup(cfg)); err != nil {
		nc.Close()
		return nil, fmt.Errorf("pgwire: connect %s as %s: %w", addr, cfg.User, err)
	}
	return c, nil
}

func (c *Conn) startup(cfg Config) error {
	params := []string{"user", cfg.User, "database", cfg.Database, "client_encoding", "UTF8"}
	if cfg.ApplicationName != "" {
		params = append(params, "application_name", cfg.ApplicationName)
	}
	body := binary.BigEndian.AppendUint32(nil, protocolVersion)
	for _, p := range params {
		body = append(append(body, p...), 0)
	}
	body = append(body, 0)
	if err := c.write(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body); err != nil {
		return err
	}
	if err := c.authenticate(cfg); err != nil {
		return err
	}
	for {
		typ, msg, err := c.read()
		if err != nil {
			return err
		}
		switch typ {
		case 'K':
			if len(msg) < 8 {
				return errors.New("protocol error: short BackendKeyData")
			}
			c.pid, c.key = binary.BigEndian.Uint32(msg), msg[4:]
		case 'S', 'N':
		case 'E':
			return parseError(msg)
		case 'Z':
			return nil
		default:
			return fmt.Errorf("protocol error: unexpected message %q during startup", typ)
		}
	}
}

func (c *Conn) authenticate(cfg Config) error {
	var scram *scramClient
	scramVerified := false
	needPassword := func(method string) error {
		if cfg.Password == "" {
			return fmt.Errorf("server requested %s authentication but no password was given", method)
		}
		return nil
	}
	for {
		typ, msg, err := c.read()
		if err != nil {
			return err
		}
		if typ == 'E' {
			return parseError(msg)
		}
		if typ != 'R' || len(msg) < 4 {
			return fmt.Errorf("protocol error: unexpected message %q during authentication", typ)
		}
		code, data := binary.BigEndian.Uint32(msg), msg[4:]
		switch code {
		case 0: // AuthenticationOk
			// A server that skips SASLFinal never proved it knows the password.
			if scram != nil && !scramVerified {
				return errors.New("SCRAM: server accepted without sending its signature")
			}
			return nil
		case 3: // cleartext
			if err := needPassword("cleartext password"); err != nil {
				return err
			}
			if err := c.send('p', append([]byte(cfg.Password), 0)); err != nil {
				return err
			}
		case 5: // MD5
			if err := needPassword("MD5 password"); err != nil {
				return err
			}
			if len(data) != 4 {
				return errors.New("protocol error: MD5 salt is not 4 bytes")
			}
			if err := c.send('p', append([]byte(md5Password(cfg.User, cfg.Password, data)), 0)); err != nil {
				return err
			}
		case 10: // SASL: a list of mechanisms
			if scram != nil {
				return errors.New("protocol error: SASL restarted")
			}
			mechs := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
			if !contains(mechs, "SCRAM-SHA-256") {
				return fmt.Errorf("server offers SASL mechanisms %v; only SCRAM-SHA-256 without channel binding is supported (no TLS)", mechs)
			}
			if err := needPassword("SCRAM-SHA-256"); err != nil {
				return err
			}
			// PostgreSQL takes the user from the startup message and
			// ignores the SCRAM user name; libpq sends it empty too.
			if scram, err = newSCRAMClient("", cfg.Password); err != nil {
				return err
			}
			first := scram.clientFirst()
			b := append([]byte("SCRAM-SHA-256"), 0)
			b = binary.BigEndian.AppendUint32(b, uint32(len(first)))
			if err := c.send('p', append(b, first...)); err != nil {
				return err
			}
		case 11: // SASLContinue: server-first
			if scram == nil {
				return errors.New("protocol error: SASLContinue before SASL")
			}
			final, err := scram.clientFinal(string(data))
			if err != nil {
				return err
			}
			if err := c.send('p', []byte(final)); err != nil {
				return err
			}
		case 12: // SASLFinal: server-final
			if scram == nil {
				return errors.New("protocol error: SASLFinal before SASL")
			}
			if err := scram.verifyServerFinal(string(data)); err != nil {
				return err
			}
			scramVerified = true
		case 2:
			return errors.New("server requested Kerberos V5 authentication, which is not supported")
		case 7, 8:
			return errors.New("server requested GSSAPI authentication, which is not supported")
		case 9:
			return errors.New("server requested SSPI authentication, which is not supported")
		default:
			return fmt.Errorf("server requested authentication method %d, which is not supported", code)
		}
	}
}

// Exec runs sql with the simple query protocol and discards any rows. sql
// may hold several statements; the first error is returned.
func (c *Conn) Exec(ctx context.Context, sql string) error {
	return c.query(ctx, sql, nil)
}

// QueryRows runs sql with the simple query protocol and returns every row of
// every result, columns in text format; a nil element is SQL NULL.
func (c *Conn) QueryRows(ctx context.Context, sql string) ([][]*string, error) {
	var rows [][]*string
	err := c.query(ctx, sql, func(msg []byte) error {
		row, err := parseDataRow(msg)
		rows = append(rows, row)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (c *Conn) query(ctx context.Context, sql string, onRow func([]byte) error) error {
	if c.broken != nil {
		return fmt.Errorf("pgwire: connection unusable: %w", c.broken)
	}
	if strings.IndexByte(sql, 0) >= 0 {
		return errors.New("pgwire: query contains a NUL byte")
	}
	// An already expired ctx must not cost the connection.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgwire: %w", err)
	}
	end := c.watch(ctx)
	sent := false
	err := func() error {
		if err := c.send('Q', append([]byte(sql), 0)); err != nil {
			return err
		}
		sent = true
		// Keep reading to ReadyForQuery even after an error, so the
		// connection is in a known state for the next query.
		var first error
		for {
			typ, msg, err := c.read()
			if err != nil {
				return err
			}
			switch typ {
			case 'D':
				if onRow != nil && first == nil {
					if err := onRow(msg); err != nil {
						return err
					}
				}
			case 'T', 'C', 'I', 'N', 'S', 'A':
			case 'E':
				e := parseError(msg)
				if e.fatal() {
					return e
				}
				if first == nil {
					first = e
				}
			case 'H': // CopyOut: the data is followed by CopyDone and CommandComplete
			case 'd', 'c':
			case 'G': // CopyIn: abort it, the server then reports an error
				if err := c.send('f', []byte("pgwire: COPY is not supported\x00")); err != nil {
					return err
				}
			case 'Z':
				return first
			default:
				return fmt.Errorf("protocol error: unexpected message %q", typ)
			}
		}
	}()
	// end also recognises a socket timeout that beat ctx's own timer.
	err = end(err)
	var pgErr *Error
	if err != nil && !(errors.As(err, &pgErr) && !pgErr.fatal()) {
		if sent && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			// Stop the server from running a query nobody waits for.
			go c.cancelRequest()
		}
		c.broken = err
		c.nc.Close()
	}
	if err != nil && pgErr == nil {
		return fmt.Errorf("pgwire: %w", err)
	}
	return err
}

// Close ends the session politely and closes the socket.
func (c *Conn) Close() error {
	if c.broken != nil {
		return nil
	}
	c.broken = errors.New("connection closed")
	c.nc.SetDeadline(time.Now().Add(time.Second))
	_ = c.send('X', nil)
	return c.nc.Close()
}

// watch applies ctx's deadline and cancellation to the socket for one
// operation. The returned func undoes it and turns a timeout caused by ctx
// into an error that errors.Is recognises as ctx's.
func (c *Conn) watch(ctx context.Context) func(error) error {
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		c.nc.SetDeadline(deadline)
	}
	poked := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(poked)
		c.nc.SetDeadline(time.Unix(1, 0)) // in the past: unblocks reads and writes now
	})
	return func(err error) error {
		if !stop() {
			<-poked // the deadline may be reset only after the AfterFunc set it
		}
		c.nc.SetDeadline(time.Time{})
		if err == nil {
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fmt.Errorf("%w (%v)", ctxErr, err)
			}
			if hasDeadline {
				// The socket deadline can fire a hair before ctx's timer.
				return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
			}
		}
		return err
	}
}

// cancelRequest asks the server, over a separate connection, to cancel
// whatever the session is running. It is best effort.
func (c *Conn) cancelRequest() {
	if c.key == nil {
		return
	}
	nc, err := net.DialTimeout("tcp", c.addr, 2*time.Second)
	if err != nil {
		return
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(2 * time.Second))
	b := binary.BigEndian.AppendUint32(nil, uint32(12+len(c.key)))
	b = binary.BigEndian.AppendUint32(b, cancelCode)
	b = binary.BigEndian.AppendUint32(b, c.pid)
	_, _ = nc.Write(append(b, c.key...))
	// The server closes the connection once it has read the request.
	_, _ = io.Copy(io.Discard, nc)
}

func (c *Conn) send(typ byte, body []byte) error {
	hdr := binary.BigEndian.AppendUint32([]byte{typ}, uint32(len(body)+4))
	return c.write(hdr, body)
}

func (c *Conn) write(hdr, body []byte) error {
	_, err := c.nc.Write(append(hdr, body...))
	return err
}

func (c *Conn) read() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > maxMessage {
		return 0, nil, fmt.Errorf("protocol error: message %q of %d bytes (limit %d)", hdr[0], n, maxMessage)
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return 0, nil, err
	}
	return hdr[0], body, nil
}

func parseDataRow(msg []byte) ([]*string, error) {
	if len(msg) < 2 {
		return nil, errors.New("protocol error: short DataRow")
	}
	n := int(binary.BigEndian.Uint16(msg))
	msg = msg[2:]
	row := make([]*string, n)
	for i := range row {
		if len(msg) < 4 {
			return nil, errors.New("protocol error: short DataRow")
		}
		size := int32(binary.BigEndian.Uint32(msg))
		msg = msg[4:]
		if size < 0 {
			continue // NULL
		}
		if int(size) > len(msg) {
			return nil, errors.New("protocol error: DataRow column overruns message")
		}
		s := string(msg[:size])
		row[i] = &s
		msg = msg[size:]
	}
	return row, nil
}

func parseError(msg []byte) *Error {
	e := &Error{}
	var localized string
	for len(msg) > 1 {
		field := msg[0]
		v, rest, _ := bytes.Cut(msg[1:], []byte{0})
		val := string(v)
		msg = rest
		switch field {
		case 'S':
			localized = val
		case 'V': // not localised, so comparable
			e.Severity = val
		case 'C':
			e.Code = val
		case 'M':
			e.Message = val
		case 'D':
			e.Detail = val
		}
	}
	if e.Severity == "" {
		e.Severity = localized
	}
	return e
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
