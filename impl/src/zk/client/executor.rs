//! The `lockwright-zk` thread: zookeeper-client's session tasks and lockwright's background
//! work, on a small local executor (no async runtime).

use std::future::Future;
use std::sync::OnceLock;
use std::task::Poll;

use futures::channel::{mpsc, oneshot};
use futures::future::BoxFuture;
use futures::StreamExt;

struct Executor {
    tx: mpsc::UnboundedSender<BoxFuture<'static, ()>>,
}

/// zookeeper-client's `asyncs::spawn` lands here: the session task joins the queue of the
/// thread it was spawned on.
struct QueueSpawner(mpsc::UnboundedSender<BoxFuture<'static, ()>>);

impl spawns_core::Spawn for QueueSpawner {
    fn spawn(&self, task: spawns_core::Task) {
        // The receiver lives as long as its thread.
        let _ = self.0.unbounded_send(Box::into_pin(task.future));
    }
}

/// Runs every task sent on `rx` until `rx` closes (or, with `until_idle`, until no task is left)
/// and they are all done. Blocked on with
/// `async_io::block_on`, so while the tasks wait this thread itself waits on the sockets (the
/// reactor): a reply wakes the session task here directly, without a hop through async-io's
/// own thread.
async fn drive(mut rx: mpsc::UnboundedReceiver<BoxFuture<'static, ()>>, until_idle: bool) {
    use futures::stream::FuturesUnordered;
    let mut tasks = FuturesUnordered::new();
    let mut open = true;
    std::future::poll_fn(|cx| loop {
        let mut progressed = false;
        while open {
            match rx.poll_next_unpin(cx) {
                Poll::Ready(Some(t)) => {
                    tasks.push(t);
                    progressed = true;
                }
                Poll::Ready(None) => open = false,
                Poll::Pending => break,
            }
        }
        while let Poll::Ready(Some(())) = tasks.poll_next_unpin(cx) {
            progressed = true;
        }
        // Only a round that found nothing new may end: a task spawned while the others ran
        // (zookeeper-client's session task, spawned by a connect) is still in `rx`.
        if !progressed {
            if (!open || until_idle) && tasks.is_empty() {
                return Poll::Ready(());
            }
            return Poll::Pending;
        }
    })
    .await;
}

/// Starts a thread that runs `first` and every task sent on the returned sender (and
/// zookeeper-client's session tasks spawned from them) until that sender and every clone of it
/// are gone — with `until_idle`, until no task is left. `on_exit` runs on the thread at the end.
pub(super) fn task_thread(
    name: &str,
    first: Option<BoxFuture<'static, ()>>,
    until_idle: bool,
    on_exit: impl FnOnce() + Send + 'static,
) -> std::io::Result<mpsc::UnboundedSender<BoxFuture<'static, ()>>> {
    let (tx, rx) = mpsc::unbounded::<BoxFuture<'static, ()>>();
    if let Some(task) = first {
        // Queued before the thread starts, so an `until_idle` thread finds it.
        let _ = tx.unbounded_send(task);
    }
    let for_zk = QueueSpawner(tx.clone());
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            {
                let _scope = spawns_core::enter(&for_zk);
                async_io::block_on(drive(rx, until_idle));
            }
            on_exit();
        })?;
    Ok(tx)
}

fn executor() -> &'static Executor {
    static EXECUTOR: OnceLock<Executor> = OnceLock::new();
    EXECUTOR.get_or_init(|| Executor {
        tx: task_thread("lockwright-zk", None, false, || {})
            .expect("cannot start the lockwright-zk thread"),
    })
}

pub(super) fn spawn_task(task: impl Future<Output = ()> + Send + 'static) {
    // The receiver lives as long as the process.
    let _ = executor().tx.unbounded_send(Box::pin(task));
}

/// Runs `f` on the executor thread and awaits its result (sessions are opened there, so their
/// session task is spawned there).
pub(super) async fn on_executor<T: Send + 'static>(
    f: impl Future<Output = T> + Send + 'static,
) -> Option<T> {
    let (tx, rx) = oneshot::channel();
    spawn_task(async move {
        let _ = tx.send(f.await);
    });
    rx.await.ok()
}
