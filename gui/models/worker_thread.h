// A worker QObject on its own QThread for as long as this object lives: the
// thread starts at construction; at destruction the worker's cancel() stops
// what it runs, the thread ends (after the work in progress) and the worker
// is deleted. The owner connects to the worker through get() / ->; calls
// reach it through queued connections or QMetaObject::invokeMethod.
#pragma once

#include <QObject>
#include <QThread>

namespace trainsim::gui {

template <class Worker>
class WorkerThread {
 public:
  explicit WorkerThread(Worker* worker) : worker_(worker) {
    worker_->moveToThread(&thread_);
    QObject::connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_.start();
  }
  ~WorkerThread() {
    worker_->cancel();  // thread-safe in every worker
    thread_.quit();
    thread_.wait();
  }
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  Worker* get() const { return worker_; }
  Worker* operator->() const { return worker_; }

 private:
  QThread thread_;
  Worker* worker_;
};

}  // namespace trainsim::gui
