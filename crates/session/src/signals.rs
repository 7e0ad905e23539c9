//! Ctrl+C: the first stops scheduling, lets in-flight operations drain and
//! keeps what was measured (the run is stored as interrupted); the second
//! quits at once.

use sojourn_core::executor::StopHandle;

/// Watch for Ctrl+C on a thread of its own, stopping `stop` on the first.
pub fn watch_ctrl_c(stop: StopHandle) {
    let spawned = std::thread::Builder::new()
        .name("sojourn-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(async {
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!(
                        "\ninterrupted: stopping and draining in-flight operations (Ctrl+C again to quit now)"
                    );
                    stop.stop();
                    if tokio::signal::ctrl_c().await.is_ok() {
                        std::process::exit(130);
                    }
                }
            });
        });
    if let Err(e) = spawned {
        eprintln!("warning: Ctrl+C will end the run without a summary ({e})");
    }
}
