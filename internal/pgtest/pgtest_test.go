package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestStart(t *testing.T) {
	c := Start(t)
	url := c.CreateDatabase(t, "probe", "")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	var fsync string
	if err := conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil {
		t.Fatal(err)
	}
	if fsync != "off" {
		t.Errorf("fsync = %q, want off", fsync)
	}
	t.Logf("server_version %s on port %d", v, c.Port)
}

func TestStartWithAuth(t *testing.T) {
	for _, method := range []string{"scram-sha-256", "md5", "password"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			c := StartWithAuth(t, method, "s3cret:/@'x")
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, c.URL("postgres"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var n int
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_hba_file_rules WHERE auth_method = $1", method).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("pg_hba rules with %s = %d, want 1", method, n)
			}
			// CreateDatabase goes through URL, so it must work with the password.
			c.CreateDatabase(t, "probe", "")
		})
	}
}
