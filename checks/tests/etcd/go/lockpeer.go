// etcd 3.4's own Go Mutex (`clientv3/concurrency`) as a peer of checks/tests/etcd/go_peer.rs:
// N times: Lock, read COUNTER, put it + 1, Unlock. Built offline from Debian's
// golang-etcd-server-dev (GO111MODULE=off, GOPATH=<dir>:/usr/share/gocode).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
)

func main() {
	endpoint, prefix, counter := os.Args[1], os.Args[2], os.Args[3]
	n, _ := strconv.Atoi(os.Args[4])
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	s, err := concurrency.NewSession(c, concurrency.WithTTL(5))
	if err != nil {
		panic(err)
	}
	m := concurrency.NewMutex(s, prefix)
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if err := m.Lock(ctx); err != nil {
			panic(err)
		}
		r, err := c.Get(ctx, counter)
		if err != nil {
			panic(err)
		}
		v := 0
		if len(r.Kvs) > 0 {
			v, _ = strconv.Atoi(string(r.Kvs[0].Value))
		}
		time.Sleep(10 * time.Millisecond)
		if _, err := c.Put(ctx, counter, strconv.Itoa(v+1)); err != nil {
			panic(err)
		}
		fmt.Printf("HELD %s %d\n", m.Key(), m.Header().Revision)
		if err := m.Unlock(ctx); err != nil {
			panic(err)
		}
	}
}
