// SPDX-License-Identifier: GPL-2.0

//! A Rust module using dynprobe's in-kernel API through its Rust layer
//! (include/dynprobe/rust/dynprobe.rs):
//!
//! - synthetic event `synthetic/dynprobe_sample_rust`, enabled here and
//!   traced from a timer every 10 ms, in turn all at once and through a
//!   reservation (field `how`: 0, 1);
//! - function event `functions/vfs_write`;
//! - fprobe event `dynprobe_sample_rust/open`, left to dynprobe to
//!   remove when this module unloads.
//!
//! The events go when their [`dynprobe::Event`]s are dropped, at unload.

use kernel::impl_has_hr_timer;
use kernel::prelude::*;
use kernel::sync::atomic::{ordering, Atomic};
use kernel::sync::{Arc, ArcBorrow};
use kernel::time::hrtimer::{
    ArcHrTimerHandle, HrTimer, HrTimerCallback, HrTimerCallbackContext, HrTimerPointer,
    HrTimerRestart, RelativeMode,
};
use kernel::time::{Delta, Monotonic};

#[path = "../../include/dynprobe/rust/dynprobe.rs"]
mod dynprobe;

use dynprobe::{
    BtfArg, Event, Fetch, FetchType, FuncType, FunctionEventBuilder, FunctionList, Name, Place,
    ProbeEventBuilder, Symbol, SynthEventBuilder, SynthEventRef, SynthType, Value, WatchAccess,
};

module! {
    type: Sample,
    name: "dynprobe_sample_rust",
    authors: ["dynprobe developers"],
    description: "dynprobe's in-kernel API from Rust",
    license: "GPL",
}

const EVENT: &CStr = c"dynprobe_sample_rust";
const PERIOD: Delta = Delta::from_millis(10);

/// The timer and what it traces.
#[pin_data]
struct Ticker {
    #[pin]
    timer: HrTimer<Self>,
    event: SynthEventRef,
    count: Atomic<u64>,
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Ticker {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

impl Ticker {
    fn trace(&self) -> Result {
        let count = self.count.fetch_add(1, ordering::Relaxed);
        let source = Value::Str(c"rust-timer");
        if count % 2 == 0 {
            self.event
                .trace(&[Value::U64(count), Value::U64(0), source])
        } else {
            let mut r = self.event.reserve()?;
            r.next(Value::U64(count))?
                .next(Value::U64(1))?
                .next(source)?;
            Ok(())
        }
    }
}

impl HrTimerCallback for Ticker {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, mut ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        let _ = this.trace();
        ctx.forward_now(PERIOD);
        HrTimerRestart::Restart
    }
}

struct Sample {
    timer: Option<ArcHrTimerHandle<Ticker>>,
    ticker: Option<Arc<Ticker>>,
    // Dropped after the fields above: the held event is put first.
    _synth: Event,
    _write: Event,
}

impl kernel::Module for Sample {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let name = Name::new(EVENT)?;
        let synth = SynthEventBuilder::new(name)?
            .field(SynthType::U64, Name::new(c"count")?)?
            .field(SynthType::UnsignedInt, Name::new(c"how")?)?
            .field(SynthType::Chars(16), Name::new(c"source")?)?
            .create(module)?;
        let write = FunctionEventBuilder::new(Symbol::new(c"vfs_write")?)?
            .arg(FuncType::X64, Name::new(c"file")?)?
            .skip()?
            .arg(FuncType::U64, Name::new(c"count")?)?
            .create(module)?;
        ProbeEventBuilder::new(
            Name::new(c"dynprobe_sample_rust")?,
            Name::new(c"open")?,
            Place::Fentry(Symbol::new(c"do_sys_openat2")?),
        )?
        .arg(Name::new(c"dfd")?, Fetch::Arg(1), Some(FetchType::S32))?
        .create(module)?
        .keep();
        // The forms beyond upstream: arguments and the return value named
        // and typed from BTF, one event over a list of functions, a
        // watchpoint.
        FunctionEventBuilder::new(Symbol::new(c"ksys_read")?)?
            .btf_arg(BtfArg::new(c"fd")?)?
            .btf_arg(BtfArg::new(c"count")?)?
            .create_exit_btf(Name::new(c"ret")?, module)?
            .keep();
        ProbeEventBuilder::new(
            Name::new(c"dynprobe_sample_rust")?,
            Name::new(c"rw")?,
            Place::FentryList(FunctionList::new(c"vfs_read,vfs_write")?),
        )?
        .arg(Name::new(c"count")?, Fetch::Arg(3), Some(FetchType::U64))?
        .create(module)?
        .keep();
        ProbeEventBuilder::new(
            Name::new(c"dynprobe_sample_rust")?,
            Name::new(c"swappiness")?,
            Place::Watch(WatchAccess::Write, Symbol::new(c"vm_swappiness")?, 4),
        )?
        .arg(
            Name::new(c"value")?,
            Fetch::WatchValue,
            Some(FetchType::S32),
        )?
        .create(module)?
        .keep();
        let event = SynthEventRef::get(name)?;
        event.enable(true)?;
        let ticker = Arc::pin_init(
            pin_init!(Ticker {
                timer <- HrTimer::new(),
                event,
                count: Atomic::new(0),
            }),
            GFP_KERNEL,
        )?;
        let timer = ticker.clone().start(PERIOD);
        Ok(Sample {
            timer: Some(timer),
            ticker: Some(ticker),
            _synth: synth,
            _write: write,
        })
    }
}

impl Drop for Sample {
    fn drop(&mut self) {
        // Cancelled, and its callback done, before the event is let go.
        drop(self.timer.take());
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.event.enable(false);
        }
    }
}
