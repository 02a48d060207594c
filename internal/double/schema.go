package double

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// schemaSentinel is the table whose presence means "certctl's schema is
// loaded"; every route the double serves needs it.
const schemaSentinel = "public.managed_certificates"

// migrateLockKey serialises concurrent --migrate-only runs against one
// database (e.g. two compose stacks sharing a server by mistake) so the
// second one sees the first one's tables instead of failing half-way.
const migrateLockKey = 0x63657274 // "cert"

// ErrSchemaMissing is returned when the server starts against a database
// that --migrate-only has not prepared.
var ErrSchemaMissing = errors.New("certctl schema not loaded: table " + schemaSentinel +
	" does not exist (run the double with --migrate-only first, as the compose file's certctl-migrate service does)")

// querier is the part of pgx.Conn / pgxpool.Pool the presence check needs.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SchemaPresent reports whether certctl's tables exist in the database.
func SchemaPresent(ctx context.Context, q querier) (bool, error) {
	var present bool
	err := q.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", schemaSentinel).Scan(&present)
	return present, err
}

// Migrate loads the pg_dump at schemaPath into the database at dbURL unless
// certctl's tables are already there. It reports whether it loaded anything.
// The whole load is one transaction: a failure leaves the database as it was.
func Migrate(ctx context.Context, dbURL, schemaPath string) (loaded bool, err error) {
	f, err := os.Open(schemaPath)
	if err != nil {
		return false, fmt.Errorf("CERTCTL_SCHEMA: %w", err)
	}
	defer f.Close()

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	// A dedicated connection, closed afterwards: the dump changes session
	// state (search_path = '') that must not leak into a pool.
	defer conn.Close(context.WithoutCancel(ctx))

	pg := conn.PgConn()
	if err := execSimple(ctx, pg, "BEGIN"); err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = execSimple(context.WithoutCancel(ctx), pg, "ROLLBACK")
		}
	}()

	if err := execSimple(ctx, pg, fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrateLockKey)); err != nil {
		return false, err
	}
	present, err := SchemaPresent(ctx, conn)
	if err != nil {
		return false, fmt.Errorf("check schema: %w", err)
	}
	if present {
		return false, nil
	}
	if err := LoadDump(ctx, pg, f); err != nil {
		return false, fmt.Errorf("%s: %w", schemaPath, err)
	}
	if err := execSimple(ctx, pg, "COMMIT"); err != nil {
		return false, err
	}
	committed = true
	return true, nil
}

// LoadDump executes a plain-format pg_dump on conn, the way psql would:
// SQL between COPY blocks goes through the simple query protocol (which
// accepts many statements at once), each "COPY ... FROM stdin;" block is
// streamed with the COPY protocol up to its "\." terminator, and psql
// meta-commands (lines starting with a backslash, such as pg_dump 15.14+'s
// \restrict / \unrestrict) are skipped. It does not manage transactions.
func LoadDump(ctx context.Context, conn *pgconn.PgConn, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var sql strings.Builder
	lineNo, chunkStart := 0, 1

	flush := func() error {
		if strings.TrimSpace(sql.String()) == "" {
			sql.Reset()
			return nil
		}
		err := execSimple(ctx, conn, sql.String())
		sql.Reset()
		if err != nil {
			return fmt.Errorf("SQL starting at line %d: %w", chunkStart, err)
		}
		return nil
	}

	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return err
		}
		if line == "" && err == io.EOF {
			break
		}
		lineNo++
		trimmed := strings.TrimRight(line, "\r\n")

		switch {
		case strings.HasPrefix(trimmed, `\`):
			// psql meta-command: meaningless to the server.
		case isCopyFromStdin(trimmed):
			if ferr := flush(); ferr != nil {
				return ferr
			}
			copyLine := lineNo
			data := &copyData{br: br}
			if _, cerr := conn.CopyFrom(ctx, data, strings.TrimSuffix(trimmed, ";")); cerr != nil {
				return fmt.Errorf("COPY at line %d: %w", copyLine, cerr)
			}
			if data.err != nil {
				return fmt.Errorf("COPY at line %d: %w", copyLine, data.err)
			}
			lineNo += data.lines
			chunkStart = lineNo + 1
		default:
			if sql.Len() == 0 {
				chunkStart = lineNo
			}
			sql.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				sql.WriteByte('\n')
			}
		}
		if err == io.EOF {
			break
		}
	}
	return flush()
}

func isCopyFromStdin(line string) bool {
	return strings.HasPrefix(line, "COPY ") && strings.HasSuffix(line, " FROM stdin;")
}

// copyData streams one COPY block's rows from the dump and reports EOF at
// the "\." terminator line, which itself is not sent: the COPY protocol
// ends data with CopyDone, not with the text terminator.
type copyData struct {
	br    *bufio.Reader
	buf   []byte
	lines int
	done  bool
	err   error
}

func (c *copyData) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.done {
			return 0, io.EOF
		}
		line, err := c.br.ReadString('\n')
		if line != "" {
			c.lines++
		}
		if strings.TrimRight(line, "\r\n") == `\.` {
			c.done = true
			continue
		}
		if err != nil {
			// Returning an error (not io.EOF) makes pgconn abort the COPY
			// with CopyFail instead of committing a truncated table.
			c.done = true
			c.err = errors.New(`dump ended inside a COPY block (no "\." terminator)`)
			return 0, c.err
		}
		c.buf = append(c.buf, line...)
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func execSimple(ctx context.Context, conn *pgconn.PgConn, sql string) error {
	_, err := conn.Exec(ctx, sql).ReadAll()
	return err
}
