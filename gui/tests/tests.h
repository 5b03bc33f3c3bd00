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
std::unique_ptr<QObject> MakeAppTest();
std::unique_ptr<QObject> MakeProfileModelTest();
std::unique_ptr<QObject> MakeCalibrationRunTest();
std::unique_ptr<QObject> MakeCalibrationPageTest();
std::unique_ptr<QObject> MakeScenarioFormTest();
std::unique_ptr<QObject> MakeScenarioPageTest();
std::unique_ptr<QObject> MakeTimelineTest();
std::unique_ptr<QObject> MakeScalingModelTest();
std::unique_ptr<QObject> MakeTimelineWindowTest();
std::unique_ptr<QObject> MakeLaunchTest();

inline std::vector<std::unique_ptr<QObject>> AllTests() {
  std::vector<std::unique_ptr<QObject>> t;
  t.push_back(MakeModelTest());
  t.push_back(MakePlanWorkerTest());
  t.push_back(MakeScenarioDocumentTest());
  t.push_back(MakeMainWindowTest());
  t.push_back(MakeAppTest());
  t.push_back(MakeProfileModelTest());
  t.push_back(MakeCalibrationRunTest());
  t.push_back(MakeCalibrationPageTest());
  t.push_back(MakeScenarioFormTest());
  t.push_back(MakeScenarioPageTest());
  t.push_back(MakeTimelineTest());
  t.push_back(MakeScalingModelTest());
  t.push_back(MakeTimelineWindowTest());
  t.push_back(MakeLaunchTest());
  return t;
}

}  // namespace trainsim::gui::test
