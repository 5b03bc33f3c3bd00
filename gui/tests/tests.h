// The test classes of gui_tests (one .cc each).
#pragma once

#include <QObject>
#include <memory>
#include <vector>

namespace trainsim::gui::test {

std::unique_ptr<QObject> MakeModelTest();
std::unique_ptr<QObject> MakePlanWorkerTest();
std::unique_ptr<QObject> MakeScenarioDocumentTest();
std::unique_ptr<QObject> MakeMainWindowTest();
std::unique_ptr<QObject> MakeLaunchTest();

inline std::vector<std::unique_ptr<QObject>> AllTests() {
  std::vector<std::unique_ptr<QObject>> t;
  t.push_back(MakeModelTest());
  t.push_back(MakePlanWorkerTest());
  t.push_back(MakeScenarioDocumentTest());
  t.push_back(MakeMainWindowTest());
  t.push_back(MakeLaunchTest());
  return t;
}

}  // namespace trainsim::gui::test
