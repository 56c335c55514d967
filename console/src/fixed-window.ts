// The rows of a long list of fixed-height rows that are on screen, for a scrolling element. O(rows on
// screen) per render whatever the list's length: TanStack Virtual measures every item again whenever
// the count changes, which at 500 events/s was O(n) per flush and the live page's longest task.
import { type RefObject, useLayoutEffect, useState } from 'react';

export type FixedWindow = { first: number; last: number; height: number; top: number };

export function useFixedWindow(scroller: RefObject<HTMLElement | null>, count: number, rowHeight: number, overscan = 6): FixedWindow {
  const [view, setView] = useState({ top: 0, height: 0 });
  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    let frame = 0;
    const read = () => {
      frame = 0;
      setView((v) => (v.top === element.scrollTop && v.height === element.clientHeight ? v : { top: element.scrollTop, height: element.clientHeight }));
    };
    const later = () => {
      frame ||= requestAnimationFrame(read);
    };
    read();
    element.addEventListener('scroll', later, { passive: true });
    const resized = new ResizeObserver(later);
    resized.observe(element);
    return () => {
      element.removeEventListener('scroll', later);
      resized.disconnect();
      cancelAnimationFrame(frame);
    };
  }, [scroller]);
  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  return { first, last, height: count * rowHeight, top: view.top };
}
