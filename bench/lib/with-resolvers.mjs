// Promise.withResolvers for Node 20 (PostGraphile 5 calls it; Node 22 has it): loaded with --import.
if (!Promise.withResolvers) {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
